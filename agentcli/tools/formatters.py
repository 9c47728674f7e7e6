"""Formatters run after a successful edit or write, as OpenCode's are: its built-ins by file
extension when their program is on PATH (and, for some, when the project configures them), and the
config's own ``formatter`` entries (``"command": [..., "$FILE"]``); ``"formatter": false`` turns
them all off. Only files inside the project are formatted; the model is told which formatter
changed the file. A project's custom formatter runs a program, so it waits for workspace trust
(`agentcli.trust`); built-ins are programs the user installed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentcli.tools.base import ToolContext


class FormatterConfig(Protocol):
    """The config's ``formatter.<name>`` (agentcli.config.model.FormatterConfig), as read here."""

    @property
    def command(self) -> list[str] | None: ...
    @property
    def extensions(self) -> list[str] | None: ...
    @property
    def disabled(self) -> bool: ...


FILE = "$FILE"
TIMEOUT_S = 30.0  # a formatter that hangs must not hold the turn


def _find_up(names: tuple[str, ...], start: Path, root: Path, contains: str = "") -> bool:
    """One of ``names`` in ``start`` or a parent up to ``root`` (containing ``contains``)."""
    for folder in (start, *start.parents):
        for name in names:
            candidate = folder / name
            if candidate.is_file():
                if not contains:
                    return True
                try:
                    if contains in candidate.read_text(encoding="utf-8", errors="replace"):
                        return True
                except OSError:
                    pass
        if folder == root:
            break
    return False


def _ruff_wanted(start: Path, root: Path) -> bool:
    """OpenCode's test: a ruff config, or ruff named among the project's dependencies."""
    return (
        _find_up(("ruff.toml", ".ruff.toml"), start, root)
        or _find_up(("pyproject.toml",), start, root, "[tool.ruff]")
        or any(
            _find_up((dep,), start, root, "ruff") for dep in ("requirements.txt", "pyproject.toml", "Pipfile")
        )
    )


@dataclass(frozen=True)
class Builtin:
    name: str
    extensions: tuple[str, ...]
    command: tuple[str, ...]  # the program first; "$FILE" the file
    wanted: Callable[[Path, Path], bool] | None = None  # beyond the program on PATH (start, root)


_RB = (".rb", ".rake", ".gemspec", ".ru")
# OpenCode 1.18's built-ins whose only condition is a program on PATH (or a config file found up);
# prettier, biome, oxfmt, pint, air and uv resolve through npm/composer/--help probes: not here.
BUILTINS: tuple[Builtin, ...] = (
    Builtin("gofmt", (".go",), ("gofmt", "-w", FILE)),
    Builtin("mix", (".ex", ".exs", ".eex", ".heex", ".leex", ".neex", ".sface"), ("mix", "format", FILE)),
    Builtin("zig", (".zig", ".zon"), ("zig", "fmt", FILE)),
    Builtin(
        "clang-format",
        (".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ino", ".C", ".H"),
        ("clang-format", "-i", FILE),
        lambda start, root: _find_up((".clang-format",), start, root),
    ),
    Builtin("ktlint", (".kt", ".kts"), ("ktlint", "-F", FILE)),
    Builtin("ruff", (".py", ".pyi"), ("ruff", "format", FILE), _ruff_wanted),
    Builtin("rubocop", _RB, ("rubocop", "--autocorrect", FILE)),
    Builtin("standardrb", _RB, ("standardrb", "--fix", FILE)),
    Builtin("htmlbeautifier", (".erb", ".html.erb"), ("htmlbeautifier", FILE)),
    Builtin("dart", (".dart",), ("dart", "format", FILE)),
    Builtin(
        "ocamlformat",
        (".ml", ".mli"),
        ("ocamlformat", "-i", FILE),
        lambda start, root: _find_up((".ocamlformat",), start, root),
    ),
    Builtin("terraform", (".tf", ".tfvars"), ("terraform", "fmt", FILE)),
    Builtin("latexindent", (".tex",), ("latexindent", "-w", "-s", FILE)),
    Builtin("gleam", (".gleam",), ("gleam", "format", FILE)),
    Builtin("shfmt", (".sh", ".bash"), ("shfmt", "-w", FILE)),
    Builtin("nixfmt", (".nix",), ("nixfmt", FILE)),
    Builtin("rustfmt", (".rs",), ("rustfmt", FILE)),
    Builtin("ormolu", (".hs",), ("ormolu", "-i", FILE)),
    Builtin("cljfmt", (".clj", ".cljs", ".cljc", ".edn"), ("cljfmt", "fix", "--quiet", FILE)),
    Builtin("dfmt", (".d",), ("dfmt", "-i", FILE)),
)


def _matches(path: Path, extensions: tuple[str, ...] | list[str]) -> bool:
    return any(path.name.endswith(ext) for ext in extensions)


@dataclass(frozen=True)
class Formatters:
    """The formatters a session's config allows: custom entries and the built-ins not disabled."""

    custom: Mapping[str, FormatterConfig]
    enabled: bool = True

    @classmethod
    def from_config(cls, value: Mapping[str, FormatterConfig] | bool) -> Formatters:
        if isinstance(value, bool):
            return cls({}, enabled=value)
        return cls(dict(value))

    def commands(self, path: Path, root: Path) -> list[tuple[str, list[str]]]:
        """(name, argv) of every formatter for ``path``, in OpenCode's order, custom ones last."""
        if not self.enabled:
            return []
        out: list[tuple[str, list[str]]] = []
        for builtin in BUILTINS:
            entry = self.custom.get(builtin.name)
            if entry is not None and (entry.disabled or entry.command):
                continue  # off, or replaced by the entry's own command below
            extensions = entry.extensions if entry and entry.extensions else builtin.extensions
            if not _matches(path, extensions) or shutil.which(builtin.command[0]) is None:
                continue
            if builtin.wanted is None or builtin.wanted(path.parent, root):
                out.append((builtin.name, [path.as_posix() if a == FILE else a for a in builtin.command]))
        for name, entry in self.custom.items():
            if entry.disabled or not entry.command or not _matches(path, entry.extensions or []):
                continue
            out.append((name, [a.replace(FILE, str(path)) for a in entry.command]))
        return out

    def apply(self, path: Path, root: Path) -> list[str]:
        """Run each formatter for ``path`` (inside ``root`` only); the names of those that changed it."""
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            return []
        changed: list[str] = []
        for name, argv in self.commands(path, root):
            before = _read(path)
            try:
                subprocess.run(
                    argv,
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=TIMEOUT_S,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError):
                continue  # a broken formatter leaves the file as the tool wrote it
            if _read(path) != before:
                changed.append(name)
        return changed


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def note(names: list[str]) -> str:
    """The line appended to the tool's output: the model must re-read before its next edit."""
    return (
        f"\n\nThe file was formatted by {', '.join(names)}; read it again before editing it." if names else ""
    )


def after_write(ctx: ToolContext, path: Path, text: str) -> tuple[str, str]:
    """Format a file a tool just wrote: its text now and the note for the model. A file held in an
    editor's buffer (ACP) is left to the editor."""
    if ctx.formatters is None or (ctx.files is not None and ctx.files.read_text(path) is not None):
        return text, ""
    names = ctx.formatters.apply(path, ctx.root)
    if not names:
        return text, ""
    ctx.file_times.record_read(path)
    try:
        return path.read_text(encoding="utf-8"), note(names)
    except (OSError, UnicodeDecodeError):
        return text, note(names)
