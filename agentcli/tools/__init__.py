"""The coding tools, with OpenCode's names, parameters and result conventions."""

from agentcli.tools.filetime import MemoryFileTimes
from agentcli.tools.registry import TOOL_NAMES, all_tools, get_tool, parse_arguments, run_tool
from agentcli.tools.skill import Skill, available_skills
from agentcli.tools.todo import MemoryTodos
from agentcli.tools.truncate import truncate_output

__all__ = [
    "TOOL_NAMES",
    "MemoryFileTimes",
    "MemoryTodos",
    "Skill",
    "all_tools",
    "available_skills",
    "get_tool",
    "parse_arguments",
    "run_tool",
    "truncate_output",
]
