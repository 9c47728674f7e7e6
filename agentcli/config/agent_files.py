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


def parse_front_matter(head: str, label: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1: 1-based, +1: the --- line
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise ConfigError(f"{label}: the front matter is not valid YAML ({problem}{where})") from None
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
