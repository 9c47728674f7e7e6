"""The system prompt: the agent's prompt, facts about the environment, and the project's
instruction files (AGENTS.md / CLAUDE.md walking up to the repo root, plus global ones), as
OpenCode assembles them.

``Frozen`` keeps each session's prompt byte for byte from step to step, so the provider's prompt
cache serves it: the first block (agent prompt, environment, today's date) as first built in this
process, the instruction files as read at the start of the current user turn.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from agentcli.project_layout import INSTRUCTION_NAMES, instruction_candidates, judge


def agent_prompt(name: str = "build") -> str:
    return resources.files("agentcli.session").joinpath(f"prompts/{name}.txt").read_text(encoding="utf-8")


def find_root(directory: Path) -> Path | None:
    """The git work tree containing ``directory``, if any."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def environment(directory: Path, model: str) -> str:
    root = find_root(directory)
    return "\n".join(
        [
            f"You are powered by the model {model}.",
            "Here is some useful information about the environment you are running in:",
            "<env>",
            f"  Working directory: {directory}",
            f"  Workspace root folder: {root or directory}",
            f"  Is directory a git repo: {'yes' if root else 'no'}",
            f"  Platform: {platform.system().lower()}",
            f"  Today's date: {dt.date.today().strftime('%a %b %d %Y')}",
            "</env>",
        ]
    )


def instruction_files(
    directory: Path,
    extra: list[str],
    global_dirs: list[Path],
    env: Mapping[str, str] | None = None,
    *,
    confine: Path | None = None,
) -> list[Path]:
    """The instruction files, in order. ``confine`` is the root of a project its user has not
    trusted: its AGENTS.md / CLAUDE.md / CONTEXT.md that lead outside it, or to a credentials file, are
    left out, unread
    (`agentcli.trust`). (``extra``, the config's ``instructions``, was screened by trust already.)"""
    env = os.environ if env is None else env
    root = find_root(directory) or directory
    paths: list[Path] = []
    # Project: the first name that exists anywhere up to the root wins, as in OpenCode.
    for name in INSTRUCTION_NAMES:
        matches = instruction_candidates(directory, root, name)
        if matches:
            paths.extend(p for p in reversed(matches) if not (confine and judge(p, confine)))
            break  # outermost first, nearest last
    for gdir in global_dirs:
        for name in ("AGENTS.md", "CLAUDE.md"):
            if (gdir / name).is_file():
                paths.append(gdir / name)
                break
    claude = Path(env.get("HOME", str(Path.home()))) / ".claude" / "CLAUDE.md"
    if claude.is_file() and not env.get("OPENCODE_DISABLE_CLAUDE_CODE"):
        paths.append(claude)
    for pattern in extra:
        # os.path's expanduser leaves an unknown ``~name`` as it is (pathlib's raises).
        expanded = Path(os.path.expanduser(pattern))
        base = expanded if expanded.is_absolute() else root / pattern
        paths.extend(Path(p) for p in sorted(glob.glob(str(base), recursive=True)) if Path(p).is_file())
    unique: list[Path] = []
    for path in paths:
        if path.resolve() not in {p.resolve() for p in unique}:
            unique.append(path)
    return unique


def head(directory: Path, model: str, *, agent: str = "build", prompt_override: str | None = None) -> str:
    """The first block: the agent's prompt and the environment (the date included)."""
    return (prompt_override or agent_prompt(agent)).strip() + "\n\n" + environment(directory, model)


def instructions(
    directory: Path,
    extra_instructions: list[str] | None = None,
    global_dirs: list[Path] | None = None,
    confine: Path | None = None,
) -> str | None:
    """The second block: the instruction files' texts as they are on disk now (None: there are none)."""
    texts = []
    for path in instruction_files(directory, extra_instructions or [], global_dirs or [], confine=confine):
        try:
            texts.append(f"Instructions from: {path}\n{path.read_text(encoding='utf-8', errors='replace')}")
        except OSError:
            continue
    return "\n\n".join(texts) if texts else None


def build(
    directory: Path,
    model: str,
    *,
    agent: str = "build",
    prompt_override: str | None = None,
    extra_instructions: list[str] | None = None,
    global_dirs: list[Path] | None = None,
    confine: Path | None = None,
) -> list[str]:
    """The system prompt as OpenCode's two blocks: [agent prompt + environment, instructions]."""
    first = head(directory, model, agent=agent, prompt_override=prompt_override)
    rest = instructions(directory, extra_instructions, global_dirs, confine)
    return [first] if rest is None else [first, rest]


@dataclass
class Frozen:
    """Each session's system prompt, built once per session and process: ``blocks`` gives the same
    strings at every step; ``new_turn`` has the next request read the instruction files again (an
    edit on disk shows from the next user turn, never in the middle of one)."""

    directory: Path
    extra_instructions: list[str] = field(default_factory=list)
    global_dirs: list[Path] = field(default_factory=list)
    confine: Path | None = None
    _heads: dict[tuple[str, str, str | None], str] = field(default_factory=dict, repr=False)
    _instructions: dict[str, str | None] = field(default_factory=dict, repr=False)

    def blocks(self, session_id: str, model: str, prompt_override: str | None = None) -> list[str]:
        """``prompt_override``: the agent's prompt (None: the build agent's); another agent or model
        is another first block, itself kept from then on."""
        key = (session_id, model, prompt_override)
        first = self._heads.get(key)
        if first is None:
            first = self._heads[key] = head(self.directory, model, prompt_override=prompt_override)
        if session_id not in self._instructions:
            self._instructions[session_id] = instructions(
                self.directory, self.extra_instructions, self.global_dirs, self.confine
            )
        rest = self._instructions[session_id]
        return [first] if rest is None else [first, rest]

    def new_turn(self, session_id: str) -> None:
        self._instructions.pop(session_id, None)
