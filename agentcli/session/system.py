"""The system prompt: the agent's prompt, facts about the environment, and the project's
instruction files (AGENTS.md / CLAUDE.md walking up to the repo root, plus global ones), as
OpenCode assembles them."""

from __future__ import annotations

import datetime as dt
import glob
import os
import platform
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from agentcli.project_layout import INSTRUCTION_NAMES, escapes, instruction_candidates


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
    trusted: its AGENTS.md / CLAUDE.md / CONTEXT.md that lead outside it are left out, unread
    (`agentcli.trust`). (``extra``, the config's ``instructions``, was screened by trust already.)"""
    env = os.environ if env is None else env
    root = find_root(directory) or directory
    paths: list[Path] = []
    # Project: the first name that exists anywhere up to the root wins, as in OpenCode.
    for name in INSTRUCTION_NAMES:
        matches = instruction_candidates(directory, root, name)
        if matches:
            paths.extend(p for p in reversed(matches) if not (confine and escapes(p, confine)))
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
    head = (prompt_override or agent_prompt(agent)).strip() + "\n\n" + environment(directory, model)
    blocks = [head]
    texts = []
    for path in instruction_files(directory, extra_instructions or [], global_dirs or [], confine=confine):
        try:
            texts.append(f"Instructions from: {path}\n{path.read_text(encoding='utf-8', errors='replace')}")
        except OSError:
            continue
    if texts:
        blocks.append("\n\n".join(texts))
    return blocks
