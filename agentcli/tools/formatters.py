"""Formatters run after a successful edit or write, as OpenCode 1.18.33's are, once the config's
``formatter`` turns them on (``true``, or an object of overrides; omitted or ``false``: none): its
built-ins by file extension when their program is found and the project calls for them (a config
file, a dependency), and the config's own entries (``"command": [..., "$FILE"]``, ``"environment"``).
Only files inside the project are formatted; the model is told which formatter changed the file. A
project's custom formatter runs a program, so it waits for workspace trust (`agentcli.trust`).
Built-ins are programs the user installed, except those that run the project's own code (its
``node_modules/.bin`` or ``vendor/bin``, prettier's JavaScript config): those run only in a folder
the user trusted outright (``Where.trusted``). OpenCode installs its npm formatters from npm on
first use; agentcli installs nothing."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    def environment(self) -> dict[str, str] | None: ...
    @property
    def disabled(self) -> bool: ...


FILE = "$FILE"
TIMEOUT_S = 30.0  # a formatter that hangs must not hold the turn
PROBE_TIMEOUT_S = 10.0  # ``air --help``, ``uv format --help``


@dataclass(frozen=True)
class Where:
    """What a built-in's detection looks at: the edited file's folder, the project root, and whether
    the user trusted this folder (then the project's own programs, ``node_modules/.bin`` or
    ``vendor/bin``, and formatters that run the project's JavaScript config may run)."""

    start: Path
    root: Path
    trusted: bool = False
    oxfmt: bool = False  # OpenCode's experimental oxfmt is on (``oxfmt_flag``)


def oxfmt_flag(env: Mapping[str, str], truthy: Callable[[str | None], bool]) -> bool:
    """OPENCODE_EXPERIMENTAL_OXFMT when set, else OPENCODE_EXPERIMENTAL, as OpenCode reads them."""
    flag = env.get("OPENCODE_EXPERIMENTAL_OXFMT")
    return truthy(flag if flag is not None else env.get("OPENCODE_EXPERIMENTAL"))


def _found_up(names: tuple[str, ...], where: Where) -> list[Path]:
    """Each of ``names`` in the file's folder or a parent up to the root, nearest first."""
    out: list[Path] = []
    for folder in (where.start, *where.start.parents):
        out += [folder / name for name in names if (folder / name).is_file()]
        if folder == where.root:
            break
    return out


def _find_up(names: tuple[str, ...], where: Where, contains: str = "") -> bool:
    """One of ``names`` found up (the nearest containing ``contains``, when given)."""
    found = _found_up(names, where)
    if not contains or not found:
        return bool(found)
    try:
        return contains in found[0].read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _ruff_wanted(where: Where) -> bool:
    """OpenCode's test: a ruff config, or ruff named among the project's dependencies."""
    if _find_up(("ruff.toml", ".ruff.toml"), where) or _find_up(("pyproject.toml",), where, "[tool.ruff]"):
        return True
    return any(_find_up((dep,), where, "ruff") for dep in ("requirements.txt", "pyproject.toml", "Pipfile"))


def _declares(manifest: str, sections: tuple[str, ...], package: str, where: Where) -> bool:
    """A ``manifest`` found up (package.json, composer.json) lists ``package`` in one of ``sections``."""
    for path in _found_up((manifest,), where):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and any(
            isinstance(data.get(s), dict) and data[s].get(package) for s in sections
        ):
            return True
    return False


NODE_DEPS = ("dependencies", "devDependencies")


def _node_program(name: str, where: Where) -> str | None:
    """An npm formatter's program: the project's ``node_modules/.bin`` (nearest first), else PATH.
    OpenCode installs it into its own cache from npm; agentcli installs nothing."""
    local = _found_up((f"node_modules/.bin/{name}",), where)
    return str(local[0]) if local else shutil.which(name)


def _prettier(where: Where) -> list[str] | None:
    if not _declares("package.json", NODE_DEPS, "prettier", where):
        return None
    program = _node_program("prettier", where)
    return [program, "--write", FILE] if program else None


def _biome(where: Where) -> list[str] | None:
    if not _found_up(("biome.json", "biome.jsonc"), where):
        return None
    program = _node_program("biome", where)
    return [program, "format", "--write", FILE] if program else None


def _oxfmt(where: Where) -> list[str] | None:
    if not where.oxfmt or not _declares("package.json", NODE_DEPS, "oxfmt", where):
        return None
    program = _node_program("oxfmt", where)
    return [program, FILE] if program else None


def _pint(where: Where) -> list[str] | None:
    declared = _declares("composer.json", ("require", "require-dev"), "laravel/pint", where)
    return ["./vendor/bin/pint", FILE] if declared else None  # run from the project root, as OpenCode


@functools.cache
def _probe(argv: tuple[str, ...]) -> tuple[int, str]:
    """Exit code and output of a ``--help`` probe (asked once per process)."""
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError):
        return -1, ""
    return done.returncode, done.stdout


def _air(where: Where) -> list[str] | None:
    """Air, the R formatter, not another ``air`` (Go's live reloader): its help says what it is."""
    program = shutil.which("air")
    if program is None:
        return None
    code, out = _probe((program, "--help"))
    first = out.split("\n", 1)[0]
    return [program, "format", FILE] if code == 0 and "R language" in first and "formatter" in first else None


def _uv(where: Where) -> list[str] | None:
    """``uv format`` (it runs ruff) where ruff itself is not wanted, and this uv has the command."""
    if shutil.which("ruff") is not None and _ruff_wanted(where):
        return None
    program = shutil.which("uv")
    if program is None or _probe((program, "format", "--help"))[0] != 0:
        return None
    return [program, "format", "--", FILE]


@dataclass(frozen=True)
class Builtin:
    name: str
    extensions: tuple[str, ...]
    command: tuple[str, ...] = ()  # the program first; "$FILE" the file (run when it is on PATH)
    wanted: Callable[[Where], bool] | None = None  # beyond the program on PATH
    # Instead of ``command``/``wanted``: the argv when the formatter applies here, else None.
    detect: Callable[[Where], list[str] | None] | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    project_code: bool = False  # runs the project's own programs or JavaScript config: trusted folders only

    def argv(self, where: Where) -> list[str] | None:
        if self.project_code and not where.trusted:
            return None
        if self.detect is not None:
            return self.detect(where)
        if shutil.which(self.command[0]) is None:
            return None
        return list(self.command) if self.wanted is None or self.wanted(where) else None


_RB = (".rb", ".rake", ".gemspec", ".ru")
_JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_WEB = (
    *_JS,
    *(".html", ".htm", ".css", ".scss", ".sass", ".less", ".vue", ".svelte", ".json", ".jsonc"),
    *(".yaml", ".yml", ".toml", ".xml", ".md", ".mdx", ".graphql", ".gql"),
)
_BUN = {"BUN_BE_BUN": "1"}  # OpenCode's environment for its npm formatters (it runs them with bun)
# OpenCode 1.18.33's built-ins, with its detection rules.
BUILTINS: tuple[Builtin, ...] = (
    Builtin("gofmt", (".go",), ("gofmt", "-w", FILE)),
    Builtin("mix", (".ex", ".exs", ".eex", ".heex", ".leex", ".neex", ".sface"), ("mix", "format", FILE)),
    Builtin("prettier", _WEB, detect=_prettier, environment=_BUN, project_code=True),
    Builtin("oxfmt", _JS, detect=_oxfmt, environment=_BUN, project_code=True),
    Builtin("biome", _WEB, detect=_biome, environment=_BUN, project_code=True),
    Builtin("zig", (".zig", ".zon"), ("zig", "fmt", FILE)),
    Builtin(
        "clang-format",
        (".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ino", ".C", ".H"),
        ("clang-format", "-i", FILE),
        lambda where: _find_up((".clang-format",), where),
    ),
    Builtin("ktlint", (".kt", ".kts"), ("ktlint", "-F", FILE)),
    Builtin("ruff", (".py", ".pyi"), ("ruff", "format", FILE), _ruff_wanted),
    Builtin("air", (".R",), detect=_air),
    Builtin("uv", (".py", ".pyi"), detect=_uv),
    Builtin("rubocop", _RB, ("rubocop", "--autocorrect", FILE)),
    Builtin("standardrb", _RB, ("standardrb", "--fix", FILE)),
    Builtin("htmlbeautifier", (".erb", ".html.erb"), ("htmlbeautifier", FILE)),
    Builtin("dart", (".dart",), ("dart", "format", FILE)),
    Builtin(
        "ocamlformat",
        (".ml", ".mli"),
        ("ocamlformat", "-i", FILE),
        lambda where: _find_up((".ocamlformat",), where),
    ),
    Builtin("terraform", (".tf", ".tfvars"), ("terraform", "fmt", FILE)),
    Builtin("latexindent", (".tex",), ("latexindent", "-w", "-s", FILE)),
    Builtin("gleam", (".gleam",), ("gleam", "format", FILE)),
    Builtin("shfmt", (".sh", ".bash"), ("shfmt", "-w", FILE)),
    Builtin("nixfmt", (".nix",), ("nixfmt", FILE)),
    Builtin("rustfmt", (".rs",), ("rustfmt", FILE)),
    Builtin("pint", (".php",), detect=_pint, project_code=True),
    Builtin("ormolu", (".hs",), ("ormolu", "-i", FILE)),
    Builtin("cljfmt", (".clj", ".cljs", ".cljc", ".edn"), ("cljfmt", "fix", "--quiet", FILE)),
    Builtin("dfmt", (".d",), ("dfmt", "-i", FILE)),
)
_LINKED = ("ruff", "uv")  # one backend: OpenCode disables both when either is disabled


def _matches(path: Path, extensions: tuple[str, ...] | list[str]) -> bool:
    return any(path.name.endswith(ext) for ext in extensions)


@dataclass(frozen=True)
class Run:
    """One formatter to run on a file: its name, argv and the environment it adds."""

    name: str
    argv: list[str]
    environment: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Formatters:
    """The formatters a session's config allows: custom entries and the built-ins not disabled.
    ``trusted``: the user trusted this folder (``Where.trusted``)."""

    custom: Mapping[str, FormatterConfig]
    enabled: bool = True
    trusted: bool = False
    oxfmt: bool = False

    @classmethod
    def from_config(
        cls, value: Mapping[str, FormatterConfig] | bool, *, trusted: bool = False, oxfmt: bool = False
    ) -> Formatters:
        if isinstance(value, bool):
            return cls({}, enabled=value, trusted=trusted, oxfmt=oxfmt)
        return cls(dict(value), trusted=trusted, oxfmt=oxfmt)

    def _disabled(self, name: str) -> bool:
        entry = self.custom.get(name)
        if name in _LINKED:
            return any(self.custom[n].disabled for n in _LINKED if n in self.custom)
        return entry is not None and entry.disabled

    def runs(self, path: Path, root: Path) -> list[Run]:
        """Every formatter for ``path``, in OpenCode's order, custom ones last. A config entry named
        like a built-in overrides its keys (``command`` replaces the detection; ``extensions``;
        ``environment`` adds to the built-in's)."""
        if not self.enabled:
            return []
        out: list[Run] = []
        where = Where(path.parent, root, self.trusted, self.oxfmt)
        for builtin in BUILTINS:
            entry = self.custom.get(builtin.name)
            if self._disabled(builtin.name) or (entry is not None and entry.command):
                continue  # off, or replaced by the entry's own command below
            extensions = entry.extensions if entry and entry.extensions else builtin.extensions
            if not _matches(path, extensions) or (argv := builtin.argv(where)) is None:
                continue
            env = {**builtin.environment, **((entry.environment or {}) if entry else {})}
            out.append(Run(builtin.name, [path.as_posix() if a == FILE else a for a in argv], env))
        for name, entry in self.custom.items():
            if entry.disabled or not entry.command or not _matches(path, entry.extensions or []):
                continue
            builtin_env = next((b.environment for b in BUILTINS if b.name == name), {})
            env = {**builtin_env, **(entry.environment or {})}
            out.append(Run(name, [a.replace(FILE, str(path)) for a in entry.command], env))
        return out

    def commands(self, path: Path, root: Path) -> list[tuple[str, list[str]]]:
        """(name, argv) of every formatter for ``path`` (``runs``)."""
        return [(run.name, run.argv) for run in self.runs(path, root)]

    def apply(self, path: Path, root: Path) -> list[str]:
        """Run each formatter for ``path`` (inside ``root`` only); the names of those that changed it."""
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            return []
        changed: list[str] = []
        for run in self.runs(path, root):
            before = _read(path)
            try:
                subprocess.run(
                    run.argv,
                    cwd=root,
                    env={**os.environ, **run.environment} if run.environment else None,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=TIMEOUT_S,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError):
                continue  # a broken formatter leaves the file as the tool wrote it
            if _read(path) != before:
                changed.append(run.name)
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
