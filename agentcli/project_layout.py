"""Where a project keeps agentcli's things (instruction files, custom command, skill and agent
folders), and the one resolver of a path a project names: ``judge`` follows its symlinks as opening
it would and says why reading it needs the user's say (it leaves the project, or it is a file that
may hold credentials). Stdlib only, a leaf: trust, the config, the tools, the session loop and the
CLI all ask the same question here."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Literal

# Custom slash-command folders, relative to the project root (OpenCode's and agentcli's own).
COMMAND_DIRS = (".opencode/command", ".opencode/commands", ".agentcli/commands")

# Instruction files, found in the session's folder and each one up to the project root (OpenCode's
# names; CONTEXT.md is deprecated there, still read).
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")

# Skill folders, relative to the project root (OpenCode's and agentcli's own), in load order.
SKILL_DIRS = (".opencode/skill", ".opencode/skills", ".agentcli/skills")


# Files that hold credentials: reading them asks (permission "read"), and a project's config naming
# one (an instruction file, an agent file, a ``{file:}``, a link) needs the user's trust, even inside
# the project.
SECRET_PATTERNS = ("~/.ssh/*", "~/.aws/*", "~/.gnupg/*", "~/.config/agentcli/*", "*/.env", "*/.env.*")
NOT_SECRET = ("*/.env.example", "*/.env.sample", "*/.env.template")


def _matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        pattern = os.path.expanduser(pattern)
        if fnmatch.fnmatchcase(path, pattern) or (pattern.endswith("/*") and path == pattern[:-2]):
            return True
    return False


def is_secret(path: Path) -> bool:
    text = str(path)
    return _matches_any(text, SECRET_PATTERNS) and not _matches_any(text, NOT_SECRET)


Why = Literal["outside", "credentials"]
SAID: dict[Why, str] = {
    "outside": "links outside the project",
    "credentials": "a file that may hold credentials",
}


def judge(path: Path, root: Path) -> Why | None:
    """Why a file a project names may not be read without the user's say, or None.

    The one resolver of every path a project's config can name (instructions, agent files and
    folders, commands, skills, ``{file:}``, plugin sources): symlinks are followed component by
    component, as opening the file would, and the place the read really lands is judged — outside
    the project needs trust, a credentials file (``.env``, ``~/.ssh`` …) is asked about wherever it is.
    """
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: not provably inside
        return "outside"
    if not real.is_relative_to(root.resolve()):
        return "outside"
    return "credentials" if is_secret(real) or is_secret(Path(os.path.abspath(path))) else None


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies inside ``root`` (already resolved)."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop: not provably inside
        return False


def escapes(path: Path, root: Path) -> bool:
    """Whether ``path``, symlinks resolved, lies outside the project ``root``: the one test of it."""
    return not inside(path, root.resolve())


def command_paths(root: Path, subs: tuple[str, ...] = COMMAND_DIRS) -> list[Path]:
    """The custom command files under ``root``'s command folders, in load order."""
    return [path for sub in subs if (root / sub).is_dir() for path in sorted((root / sub).glob("*.md"))]


def skill_files(folder: Path) -> list[Path]:
    """The SKILL.md files under one skills folder, at any depth, in load order."""
    return sorted(folder.rglob("SKILL.md")) if folder.is_dir() else []


def instruction_candidates(directory: Path, root: Path, name: str) -> list[Path]:
    """The files called ``name`` in ``directory`` and each folder up to ``root``, nearest first."""
    found = []
    for candidate in (directory, *directory.parents):
        if (candidate / name).is_file():
            found.append(candidate / name)
        if candidate == root:
            break
    return found
