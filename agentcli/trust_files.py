"""The files a project's config makes agentcli read, found where the readers find them, and what
each says (``digest``): what a workspace-trust answer is bound to besides the config's own text.

Every path here is judged by ``inside`` (``Path.resolve``): symlinks are followed component by
component before ``..`` is applied, as the OS does when the file is opened. Normalising first
would judge ``lnk/../secret`` as ``secret`` in the project while the read leaves through ``lnk``.
Stdlib only, like ``agentcli.trust`` which uses it (startup must stay fast).
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agentcli.config import BUNDLED_PLUGINS as BUNDLED
from agentcli.project_layout import (
    INSTRUCTION_NAMES,
    SAID,
    SKILL_DIRS,
    command_paths,
    inside,
    instruction_candidates,
    judge,
    skill_files,
)

SUBST = re.compile(r"\{(env|file):([^}]+)\}")

Key = tuple[str | int, ...]  # where a value sits in a config file: keys and list indices


def walk_strings(node: Any, path: Key = ()) -> Iterator[tuple[Key, str]]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from walk_strings(v, (*path, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_strings(v, (*path, i))
    elif isinstance(node, str):
        yield path, node


def _literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard: what the glob can never leave."""
    cut = min((i for i, c in enumerate(pattern) if c in "*?["), default=len(pattern))
    return pattern[:cut]


def home_path(arg: str, home: Path) -> Path | None:
    return home / arg[2:] if arg.startswith("~/") else (home if arg == "~" else None)


def _instruction_base(pattern: str, root: Path, home: Path) -> Path:
    """Where an ``instructions`` glob points, as ``agentcli.session.request.system`` expands it."""
    base = home_path(pattern, home) or Path(os.path.expanduser(pattern))
    return base if base.is_absolute() else root / pattern


def instruction_reason(pattern: str, root: Path, home: Path) -> str | None:
    """Why an ``instructions`` pattern needs trust (``judge``), or None."""
    base = _instruction_base(pattern, root, home)
    if not inside(Path(_literal_prefix(str(base)) or "/"), root):
        return f"reads {pattern} outside the project"
    # Every match too: an in-project symlink may point anywhere, or at a credentials file.
    matches = itertools.islice(glob.iglob(str(base), recursive=True), _GLOBBED)
    for p in matches:
        if why := judge(Path(p), root):
            return f"reads {pattern}" + (" outside the project" if why == "outside" else f", {SAID[why]}")
    return None


def _file_target(arg: str, source: Path, home: Path) -> Path:
    """Where a ``{file:}`` substitution reads, as ``agentcli.config`` does (relative to its file)."""
    return home_path(arg, home) or source.parent / arg


def file_reason(arg: str, source: Path, root: Path, home: Path) -> str | None:
    """Why a ``{file:}`` substitution needs trust (``judge``), or None."""
    why = judge(_file_target(arg, source, home), root)
    if why is None:
        return None
    return f"reads {arg}" + (" outside the project" if why == "outside" else f", {SAID[why]}")


def command_files(root: Path) -> list[tuple[Path, str]]:
    """The project's custom command files and their text: part of what a trust answer is bound to."""
    out: list[tuple[Path, str]] = []
    for path in command_paths(root):
        try:
            out.append((path, path.read_text(encoding="utf-8", errors="surrogateescape")))
        except OSError:  # unreadable: not loadable either, but a later readable one changes the hash
            out.append((path, ""))
    return out


def skill_links(root: Path) -> list[tuple[Path, str]]:
    """The project's skills whose SKILL.md ``judge`` flags (outside the project, or a credentials
    file), each with where it leads and its ``digest`` (nothing of it is used until trusted). Part
    of what a trust answer is bound to."""
    return [
        (path, f"links to {digest(path)}")
        for sub in SKILL_DIRS
        for path in skill_files(root / sub)
        if judge(path, root)
    ]


def instruction_links(root: Path, directory: Path) -> list[tuple[Path, str]]:
    """The project's AGENTS.md / CLAUDE.md / CONTEXT.md (in ``directory`` and up to ``root``) that
    ``judge`` flags, each with where it leads and its ``digest``."""
    return [
        (path, f"links to {digest(path)}")
        for name in INSTRUCTION_NAMES
        for path in instruction_candidates(directory, root, name)
        if judge(path, root)
    ]


_HASHED = 16 << 20  # bytes of a file hashed; past it, its size and modification time stand in
_GLOBBED = 200  # instruction files a risky pattern contributes to the fingerprint


def digest(path: Path) -> str:
    """Where a file really is and what it says (a hash): part of what a trust answer is bound to, so
    new text behind the same config (a ``git pull``, a retargeted link) asks again. Read here only to
    hash it; what is not a regular file (a FIFO, a device) is named, never opened. Bounded, since it
    runs on every start, before the user has said anything."""
    try:
        real = path.resolve()
        if not real.is_file():
            return f"{real}: not a file"
        hashed = hashlib.sha256()
        with real.open("rb") as handle:
            while hashed_bytes := handle.read(1 << 20):
                hashed.update(hashed_bytes)
                if handle.tell() >= _HASHED:
                    info = real.stat()
                    hashed.update(f"\0{info.st_size}\0{info.st_mtime_ns}".encode())
                    break
    except (OSError, RuntimeError):  # unreadable, or a symlink loop
        return f"{path}: unreadable"
    return f"{real}: sha256 {hashed.hexdigest()}"


def _module_file(name: str) -> Path | None:
    """The source of an importable module, found the way import finds it but without importing it
    (importing a package runs its code)."""
    from importlib.machinery import PathFinder

    locations: list[str] | None = None
    spec = None
    parts = name.split(".")
    for i in range(len(parts)):
        if i and locations is None:
            return None  # a module, not a package: it has no submodules
        spec = PathFinder.find_spec(".".join(parts[: i + 1]), locations)
        if spec is None:
            return None
        locations = list(spec.submodule_search_locations or []) or None
    return Path(spec.origin) if spec is not None and spec.has_location and spec.origin else None


def plugin_file(spec: str, source: Path, root: Path, home: Path) -> Path | None:
    """The file a ``plugin`` entry of the config file ``source`` loads, resolved as
    ``agentcli.config`` and ``agentcli.plugins.manager`` resolve it (None: a bundled plugin)."""
    if spec in BUNDLED:
        return None
    if spec.startswith("file://"):
        rest = spec[len("file://") :]
        if not rest.startswith(("/", "localhost/")):  # relative: beside the config file that lists it
            return source.parent / unquote(rest)
        path = Path(unquote(urlparse(spec).path))
    elif spec.endswith(".py"):
        path = home_path(spec, home) or Path(os.path.expanduser(spec))
    else:
        return _module_file(spec)
    return path if path.is_absolute() else root / path


def _key_reads(path: Key, value: Any, source: Path, root: Path, home: Path) -> Iterator[Path]:
    """The files one risky key makes agentcli read once trusted."""
    for sub, text in walk_strings(value, path):
        if sub[0] == "plugin" and (found := plugin_file(text, source, root, home)) is not None:
            yield found
        elif sub[0] == "instructions":
            base = _instruction_base(text, root, home)  # "/**" must not walk the disk on every start
            yield from (Path(p) for p in itertools.islice(glob.iglob(str(base), recursive=True), _GLOBBED))
        for kind, arg in SUBST.findall(text):
            if kind == "file":
                yield _file_target(arg, source, home)


def risky_reads(
    data: Mapping[str, Any], keys: list[Key], *, source: Path, root: Path, home: Path
) -> list[tuple[Path, str]]:
    """Every file the risky keys of one project config file read (plugin sources, instruction files,
    ``{file:}`` targets), each with its ``digest``: trusting the keys is trusting what they read."""
    out: list[tuple[Path, str]] = []
    for key in keys:
        out += [(path, digest(path)) for path in _key_reads(key, _lookup(data, key), source, root, home)]
    return out


def _lookup(data: Any, path: Key) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data
