"""skill: load a skill's instructions. A skill is a folder holding SKILL.md with front matter
(``name``, ``description``); the tool's description lists the skills it can load."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from agentcli.project_layout import SKILL_DIRS, judge, skill_files
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.params import ToolParams

_FILE_SAMPLE = 10

_INTRO = """Load a skill: specialised instructions (and the scripts or references next to them) for a
kind of task. Load one when the user asks for it, or when the task clearly matches a skill's
description; not merely because a word overlaps. The output is the skill's content and its base
directory; relative paths in it are relative to that directory."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    location: Path  # the SKILL.md file
    content: str  # the body after the front matter

    @property
    def directory(self) -> Path:
        return self.location.parent


_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_skill(path: Path) -> Skill | None:
    """Read one SKILL.md; None when it cannot be read. Only flat ``key: value`` front matter is
    understood (with ``>``/``|`` blocks folded onto one line) — all a skill header needs."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    meta: dict[str, str] = {}
    body = text
    m = _FRONT.match(text)
    if m:
        body = text[m.end() :]
        key = None
        for line in m.group(1).splitlines():
            kv = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
            if kv:
                key, value = kv.group(1), kv.group(2)
                meta[key] = "" if value.strip() in {">", "|", ">-", "|-"} else _unquote(value)
            elif key and line.startswith((" ", "\t")):
                meta[key] = (meta[key] + " " + line.strip()).strip()
    name = meta.get("name") or path.parent.name
    return Skill(name=name, description=meta.get("description", ""), location=path, content=body.strip())


def available_skills(dirs: list[Path], *, confine: Path | None = None) -> list[Skill]:
    """Every skill under ``dirs`` (``*/SKILL.md`` at any depth); the first of a name wins, so pass
    project folders before global ones. ``confine`` is the root of a project its user has not
    trusted: a skill in its own skill folders whose SKILL.md links outside it (or to a credentials
    file) is left out, unread
    (`agentcli.trust`). Global skills may link anywhere: they are the user's own."""
    project = {confine / sub for sub in SKILL_DIRS} if confine else set()
    seen: dict[str, Skill] = {}
    for folder in dirs:
        for path in skill_files(folder):
            if confine and folder in project and judge(path, confine):
                continue
            skill = parse_skill(path)
            if skill and skill.name not in seen:
                seen[skill.name] = skill
    return list(seen.values())


def describe(skills: list[Skill]) -> str:
    if not skills:
        return _INTRO + "\n\nNo skills are available."
    items = "\n".join(
        f"  <skill>\n    <name>{s.name}</name>\n    <description>{s.description}</description>\n  </skill>"
        for s in skills
    )
    return f"{_INTRO}\n\n<available_skills>\n{items}\n</available_skills>"


def _sample_files(directory: Path) -> list[Path]:
    files: list[Path] = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.name != "SKILL.md":
            files.append(path)
            if len(files) >= _FILE_SAMPLE:
                break
    return files


class SkillParams(ToolParams):
    name: str = Field(description="The name of the skill from available_skills")


class SkillTool(Tool[SkillParams]):
    name = "skill"
    params = SkillParams

    def __init__(self, skill_dirs: list[Path] | None = None, *, confine: Path | None = None) -> None:
        self.skill_dirs = list(skill_dirs or [])
        self.confine = confine  # an untrusted project's root (see `available_skills`)
        self.description = describe(available_skills(self.skill_dirs, confine=confine))

    def execute(self, args: SkillParams, ctx: ToolContext) -> ToolResult:
        skills = available_skills(ctx.skill_dirs or self.skill_dirs, confine=self.confine)
        wanted = args.name.strip()
        skill = next((s for s in skills if s.name == wanted), None)
        if skill is None:
            names = ", ".join(s.name for s in skills) or "none"
            raise ToolError(f'Skill "{wanted}" not found. Available skills: {names}')
        files = "\n".join(f"<file>{p}</file>" for p in _sample_files(skill.directory))
        output = "\n".join(
            [
                f'<skill_content name="{skill.name}">',
                f"# Skill: {skill.name}",
                "",
                skill.content,
                "",
                f"Base directory for this skill: {skill.directory}",
                "Relative paths in this skill (e.g. scripts/, reference/) are relative to this base "
                "directory.",
                "",
                "<skill_files>",
                files,
                "</skill_files>",
                "</skill_content>",
            ]
        )
        return ToolResult(
            output=output,
            title=f"Loaded skill: {skill.name}",
            metadata={"name": skill.name, "dir": str(skill.directory)},
        )
