"""Where a project keeps agentcli's things (instruction files, custom command and skill folders), and
the one test of whether a path, symlinks resolved, lies outside the project. Stdlib only, a leaf:
trust, the tools, the session loop and the CLI all ask the same question here."""

from __future__ import annotations

from pathlib import Path

# Custom slash-command folders, relative to the project root (OpenCode's and agentcli's own).
COMMAND_DIRS = (".opencode/command", ".opencode/commands", ".agentcli/commands")

# Instruction files, found in the session's folder and each one up to the project root (OpenCode's
# names; CONTEXT.md is deprecated there, still read).
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")

# Skill folders, relative to the project root (OpenCode's and agentcli's own), in load order.
SKILL_DIRS = (".opencode/skill", ".opencode/skills", ".agentcli/skills")


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
