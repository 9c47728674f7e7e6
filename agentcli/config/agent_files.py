"""Agents written as Markdown files, OpenCode's ``.opencode/agent/<name>.md``: YAML front matter (the
keys of an ``agent.<name>`` entry), then the agent's prompt. Each file becomes one config source,
``{"agent": {name: {...front matter, "prompt": body}}}``, merged like any config file: a project's
files after the project's opencode.json, the global config dir's after the global opencode.json.

A file that cannot be read or whose front matter is broken is one warning naming it; that agent is
left out and everything else loads (``merge_sources`` treats a bad value in a file the same way).
PyYAML is imported only when an agent file has front matter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.config.errors import ConfigError

# Folders of agent files: in the project (every folder from the git root down to cwd), and in the
# global config dir. Names nest: ``.opencode/agent/docs/writer.md`` is the agent ``docs/writer``.
PROJECT_AGENT_DIRS = (".opencode/agent", ".opencode/agents", ".agentcli/agents")
GLOBAL_AGENT_DIRS = ("agent", "agents")
# OpenCode's legacy modes: files in these folders are primary agents (``legacy_modes`` for the key).
PROJECT_MODE_DIRS = (".opencode/mode", ".opencode/modes")
GLOBAL_MODE_DIRS = ("mode", "modes")


def legacy_modes(data: dict[str, Any]) -> dict[str, Any]:
    """A config file's legacy ``mode`` section as OpenCode 1.18.33 reads it: each entry becomes a
    primary agent, merged over the file's ``agent`` entry of that name. Done on the file as read,
    so a project's modes are screened for trust exactly as its agents are."""
    modes = data.get("mode")
    if not isinstance(modes, dict):
        return data
    agents = dict(data["agent"]) if isinstance(data.get("agent"), dict) else {}
    for name, entry in modes.items():
        if isinstance(entry, dict):
            base = agents.get(name)
            agents[name] = {**(base if isinstance(base, dict) else {}), **entry, "mode": "primary"}
    return {**{k: v for k, v in data.items() if k != "mode"}, "agent": agents}


def agent_files(base: Path, subs: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(name, path) of the ``*.md`` files under ``base``'s agent folders, in load order."""
    out: list[tuple[str, Path]] = []
    for sub in subs:
        folder = base / sub
        if folder.is_dir():
            for path in sorted(folder.rglob("*.md")):
                if path.is_file():
                    out.append((path.relative_to(folder).with_suffix("").as_posix(), path))
    return out


def split_front_matter(text: str, label: str) -> tuple[str | None, str]:
    """(front matter, body); None when the file has none. An opened block that is never closed is
    an error rather than a prompt that starts with YAML."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise ConfigError(f"{label}: the front matter is not closed (a line with --- must end it)")


# Front matter is parsed before the folder is trusted, so its cost is bounded whatever it holds: its
# size, and its size and depth once YAML's aliases are expanded (a few hundred bytes of nested
# aliases stand for billions of nodes, which any later walk of the value — merging, fingerprinting,
# JSON — would visit).
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_EXPANDED_NODES = 20_000
MAX_DEPTH = 32


def _expanded(node: Any, seen: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(nodes, depth) of ``node`` with every alias expanded; an alias is the same node object twice."""
    import yaml

    if id(node) in seen:
        return seen[id(node)]
    seen[id(node)] = (MAX_EXPANDED_NODES + 1, MAX_DEPTH + 1)  # a node reached again inside itself
    children: list[Any] = []
    if isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    count, depth = 1, 0
    for child in children:
        c, d = _expanded(child, seen)
        count, depth = count + c, max(depth, d)
        if count > MAX_EXPANDED_NODES or depth > MAX_DEPTH:
            break
    seen[id(node)] = (count, depth + 1)
    return seen[id(node)]


def parse_front_matter(head: str, label: str) -> dict[str, Any]:
    import yaml

    if len(head.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        raise ConfigError(f"{label}: the front matter is over {MAX_FRONT_MATTER_BYTES // 1024} KB")
    loader = yaml.SafeLoader(head)
    try:
        node = loader.get_single_node()
        if node is not None:
            count, depth = _expanded(node, {})
            if count > MAX_EXPANDED_NODES or depth > MAX_DEPTH:
                raise ConfigError(
                    f"{label}: the front matter is too large once its YAML aliases are expanded "
                    f"(over {MAX_EXPANDED_NODES:,} values or {MAX_DEPTH} levels deep)"
                )
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1: 1-based, +1: the --- line
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise ConfigError(f"{label}: the front matter is not valid YAML ({problem}{where})") from None
    except RecursionError:
        raise ConfigError(f"{label}: the front matter is nested too deeply") from None
    finally:
        loader.dispose()
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise ConfigError(f"{label}: the front matter must be `key: value` lines")
    return data


def agent_entry(text: str, label: str) -> dict[str, Any]:
    """The ``agent.<name>`` entry a file's text describes; raises ConfigError in one line."""
    head, body = split_front_matter(text, label)
    entry = parse_front_matter(head, label) if head is not None else {}
    if body.strip():
        entry["prompt"] = body.strip()  # the body wins over a `prompt:` key, as in OpenCode
    return entry
