"""Workspace trust: what a project's own config may do before its user has trusted the folder.

A cloned repository's opencode.json is written by whoever owns the repository. Until its user says
otherwise, the keys through which it could reach beyond the project have no effect at all (nothing
read, nothing loaded, nothing sent): plugins (Python code), instruction files or ``{file:}``
substitutions outside the project root (an AGENTS.md that links there included), skills whose
SKILL.md or folder links outside it, ``{env:}`` substitutions, a provider's base URL, headers or key
variables (which would hand the user's own API key to another server), MCP servers (a local one is a
program from the repository, a remote one receives what the model sends it), tools switched on, and
permission rules that allow without asking. The answer is remembered per project root and
fingerprint (the config, and what the files it reads say), so a changed config asks again. The
global OpenCode config and agentcli's user TOML are always trusted.

Stdlib + pydantic only: `agentcli.trusted_config` applies it to every config load, and `--help` /
`config` must stay fast. The folders it watches and the path test are ``agentcli.project_layout``;
the files a config reads and their digests, ``agentcli.trust_files``.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentcli.config import BUNDLED_PLUGINS as BUNDLED
from agentcli.private_files import write_private
from agentcli.project_layout import SAID, escapes, judge
from agentcli.trust_files import SUBST, Key, file_reason, instruction_reason, walk_strings

TRUST_ALL_ENV = "AGENTCLI_TRUST_ALL"  # the user's own switch (CI containers, test harnesses)


@dataclass(frozen=True)
class Risk:
    """One key of one project config file that would reach beyond the project."""

    source: Path
    path: Key
    reason: str

    @property
    def key(self) -> str:
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out


@dataclass(frozen=True)
class TrustState:
    """The trust question for one project: what is risky, and what its user answered."""

    root: Path
    fingerprint: str
    risks: tuple[Risk, ...] = ()
    decision: bool | None = None  # recorded for this root + fingerprint; None: never asked

    @property
    def trusted(self) -> bool:
        return not self.risks or self.decision is True

    @property
    def explicit(self) -> bool:
        """The user said this folder, with this config, is trusted (not merely that nothing is risky)."""
        return self.decision is True

    @property
    def pending(self) -> bool:
        """Risky keys and no recorded answer: ask (chat) or refuse (run)."""
        return bool(self.risks) and self.decision is None

    def keys(self) -> list[str]:
        return list(dict.fromkeys(r.key for r in self.risks))

    def refusal(self) -> str:
        """The one line `run` fails with."""
        return (
            f"this folder's project config is not trusted; it sets {', '.join(self.keys())}: "
            f"trust the folder with `agentcli trust {self.root}` (or pass --trust), then run again"
        )


# --------------------------------------------------------------------------- finding risky keys


_Add = Callable[[Key, str], None]  # records one reason a key needs trust


def _scan_mcp_and_tools(data: Mapping[str, Any], add: _Add, prefix: Key = ()) -> None:
    """A project's MCP servers run its code or receive what the model sends; ``tools`` set to true
    could switch back on a tool the user turned off. ``prefix``: an agent's entry."""
    servers = data.get("mcp")
    for name, entry in servers.items() if isinstance(servers, Mapping) else ():
        if isinstance(entry, Mapping) and dict(entry) == {"enabled": False}:
            continue  # turning a server off only takes away
        if isinstance(entry, Mapping) and entry.get("type") == "remote":
            add((*prefix, "mcp", name), f"connects to MCP server {entry.get('url')}")
        else:
            command = entry.get("command") if isinstance(entry, Mapping) else None
            shown = (
                " ".join(command)
                if isinstance(command, list) and all(isinstance(c, str) for c in command)
                else ""
            )
            add((*prefix, "mcp", name), f"starts MCP server {name}" + (f" ({shown})" if shown else ""))
    tools = data.get("tools")
    for name, on in tools.items() if isinstance(tools, Mapping) else ():
        if on is True:
            add((*prefix, "tools", name), "enables a tool")


def scan(
    data: Mapping[str, Any],
    *,
    source: Path,
    root: Path,
    home: Path,
    url_providers: frozenset[str] = frozenset(),
) -> list[Risk]:
    """The keys of one project config file (parsed, not yet substituted) that need trust.
    ``url_providers``: the providers the project's config sends elsewhere (a base URL)."""
    root = root.resolve()
    found: dict[Key, list[str]] = {}

    def add(path: Key, reason: str) -> None:
        found.setdefault(path, []).append(reason)

    _scan_plugins(data.get("plugin"), add)
    _scan_instructions(data.get("instructions"), root, home, add)
    _scan_substitutions(data, source, root, home, add)
    _scan_providers(data.get("provider"), add)
    _scan_mcp_and_tools(data, add)
    _scan_permission(data.get("permission"), add)
    _scan_agents(data.get("agent"), url_providers, add)
    _scan_commands_and_formatters(data, add)
    return [Risk(source, path, "; ".join(reasons)) for path, reasons in found.items()]


def url_providers(datas: list[Mapping[str, Any]]) -> frozenset[str]:
    """The provider ids to which the project's config files give a base URL."""
    out: set[str] = set()
    for data in datas:
        providers = data.get("provider")
        for pid, entry in providers.items() if isinstance(providers, Mapping) else ():
            options = entry.get("options") if isinstance(entry, Mapping) else None
            if isinstance(options, Mapping) and options.get("baseURL") is not None:
                out.add(str(pid))
    return frozenset(out)


def _scan_agents(agents: Any, url_providers: frozenset[str], add: _Add) -> None:
    """An agent of the project (opencode.json's ``agent`` or an agent file) loosens nothing unless
    trusted: its permission rules that allow, tools it switches on, its own MCP servers, and a model
    served by a provider whose URL the project set."""
    for name, entry in agents.items() if isinstance(agents, Mapping) else ():
        if not isinstance(entry, Mapping):
            continue
        prefix = ("agent", str(name))
        _scan_permission(entry.get("permission"), add, prefix)
        _scan_mcp_and_tools(entry, add, prefix)
        model = entry.get("model")
        if isinstance(model, str) and model.partition("/")[0] in url_providers:
            add((*prefix, "model"), f"agent {name} sends requests to the project's provider")


def _scan_commands_and_formatters(data: Mapping[str, Any], add: _Add) -> None:
    """A project's ``command`` entries become the user's own messages (as its command folder's files
    do); its custom ``formatter`` runs a program after every edit, and a formatter's ``environment``
    can make even a built-in one run the project's code. Turning formatters off takes away."""
    commands = data.get("command")
    for name in commands if isinstance(commands, Mapping) else ():
        add(("command", name), f"adds custom command /{name}")
    formatters = data.get("formatter")
    for name, entry in formatters.items() if isinstance(formatters, Mapping) else ():
        if isinstance(entry, Mapping) and entry.get("command") is not None:
            add(("formatter", name), f"runs formatter {name}")
        elif isinstance(entry, Mapping) and entry.get("environment"):  # NODE_OPTIONS=--require ./x.js
            add(("formatter", name, "environment"), f"sets the environment of formatter {name}")


def _scan_plugins(plugins: Any, add: _Add) -> None:
    if isinstance(plugins, list):
        for i, spec in enumerate(plugins):
            if spec not in BUNDLED:  # a bundled plugin is agentcli's own code
                add(("plugin", i), f"loads plugin {spec}")
    elif plugins:
        add(("plugin",), "loads plugins")


def _scan_instructions(instructions: Any, root: Path, home: Path, add: _Add) -> None:
    if isinstance(instructions, list):
        for i, pattern in enumerate(instructions):
            if isinstance(pattern, str) and (why := instruction_reason(pattern, root, home)):
                add(("instructions", i), why)


def _scan_substitutions(data: Mapping[str, Any], source: Path, root: Path, home: Path, add: _Add) -> None:
    for path, text in walk_strings(data):
        for kind, arg in SUBST.findall(text):
            if kind == "env":
                add(path, f"reads ${arg}")
            elif why := file_reason(arg, source, root, home):
                add(path, why)


def _scan_providers(providers: Any, add: _Add) -> None:
    for pid, entry in providers.items() if isinstance(providers, Mapping) else ():
        if isinstance(entry, Mapping):
            _scan_provider(pid, entry, add)


def _scan_provider(pid: str, entry: Mapping[str, Any], add: _Add) -> None:
    options = entry.get("options")
    if isinstance(options, Mapping):
        if options.get("baseURL") is not None:
            add(("provider", pid, "options", "baseURL"), f"sends requests to {options['baseURL']}")
        if options.get("headers"):
            add(("provider", pid, "options", "headers"), "sets request headers")
    if entry.get("env"):
        add(("provider", pid, "env"), "reads API keys from environment variables")
    models = entry.get("models")
    for mid, model in models.items() if isinstance(models, Mapping) else ():
        if isinstance(model, Mapping) and model.get("headers"):
            add(("provider", pid, "models", mid, "headers"), "sets request headers")


def _scan_permission(permission: Any, add: _Add, prefix: Key = ()) -> None:
    where = (*prefix, "permission")
    for path, text in walk_strings(permission if isinstance(permission, Mapping) else {}, where):
        if text == "allow":
            add(path, "allows without asking")


def command_risks(root: Path, files: list[tuple[Path, str]]) -> list[Risk]:
    """One risk per command folder that holds commands: they become the user's own messages."""
    folders = dict.fromkeys(path.parent for path, _ in files)
    return [
        Risk(
            folder,
            (f"{folder.relative_to(root)}/",),
            f"loads custom commands from {folder.relative_to(root)}/",
        )
        for folder in folders
    ]


def skill_risks(root: Path, links: list[tuple[Path, str]]) -> list[Risk]:
    """One risk per escaping skill: its front matter would reach the provider, and loading it its text."""
    out: list[Risk] = []
    for path, _ in links:
        what = "folder" if escapes(path.parent, root) else "SKILL.md"
        out.append(Risk(path, (f"skill {path.parent.relative_to(root)}",), f"{what} {_said(path, root)}"))
    return out


def instruction_risks(root: Path, links: list[tuple[Path, str]]) -> list[Risk]:
    """One risk per instruction file ``judge`` flags: its text would go into the system prompt."""
    return [Risk(path, (str(path.relative_to(root)),), _said(path, root)) for path, _ in links]


def _said(path: Path, root: Path) -> str:
    why = judge(path, root)
    return SAID[why] if why == "outside" else f"leads to {SAID[why]}" if why else ""


def strip(data: Mapping[str, Any], risks: list[Risk]) -> dict[str, Any]:
    """A copy of ``data`` without the risky keys (risky list entries are left out)."""
    out = copy.deepcopy(dict(data))
    for risk in risks:  # mark first, sweep after: removing list entries would shift later indices
        *parents, last = risk.path
        node: Any = out
        for part in parents:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, dict):
            node.pop(last, None)
        elif isinstance(node, list) and isinstance(last, int) and last < len(node):
            node[last] = _REMOVED
    return _sweep(out)


_REMOVED = object()


def _sweep(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sweep(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_sweep(v) for v in node if v is not _REMOVED]
    return node


def fingerprint(files: list[tuple[Path, str]]) -> str:
    """What a trust answer is bound to: every project config file's and command file's name and
    text, where each escaping skill leads, the risks found, and what each file they read says."""
    digest = hashlib.sha256()
    for path, text in files:
        digest.update(str(path).encode() + b"\0" + text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


# --------------------------------------------------------------------------- remembered answers


class Decision(BaseModel):
    trusted: bool
    at: float
    keys: list[str] = []


class TrustFile(BaseModel):
    version: int = 1
    folders: dict[str, dict[str, Decision]] = {}  # project root -> config fingerprint -> answer


class TrustStore:
    """The user's answers, in a private JSON file beside the user TOML."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> TrustFile:
        try:
            return TrustFile.model_validate_json(self.path.read_bytes())
        except (OSError, ValidationError, ValueError):
            return TrustFile()  # missing or damaged: nothing is trusted, the user is asked again

    def decision(self, root: Path, fp: str) -> bool | None:
        answer = self._read().folders.get(str(root), {}).get(fp)
        return None if answer is None else answer.trusted

    def record(self, state: TrustState, trusted: bool) -> None:
        data = self._read()
        # Only the newest answer per folder counts: an older config's trust is not kept for later.
        data.folders[str(state.root)] = {
            state.fingerprint: Decision(trusted=trusted, at=time.time(), keys=state.keys())
        }
        write_private(self.path, data.model_dump_json(indent=2) + "\n")

    def forget(self, root: Path) -> bool:
        data = self._read()
        if data.folders.pop(str(root), None) is None:
            return False
        write_private(self.path, data.model_dump_json(indent=2) + "\n")
        return True

    def folders(self) -> dict[str, Decision]:
        return {
            root: next(iter(answers.values())) for root, answers in self._read().folders.items() if answers
        }
