"""Tool call lines, built from parts filled by the real tools (their real titles, metadata, outputs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentcli.store.records import ToolPart, ToolState, ToolTime
from agentcli.tools.base import ToolContext, ToolError
from agentcli.tools.filetime import MemoryFileTimes
from agentcli.tools.registry import get_tool, run_tool
from agentcli.tools.todo import MemoryTodos
from agentcli.ui.tool_line import tool_line, tool_spinner


def _ctx(directory: Path) -> ToolContext:
    return ToolContext(
        session_id="ses_1",
        message_id="msg_1",
        call_id="call_1",
        directory=directory,
        ask=lambda request: "once",
        file_times=MemoryFileTimes(),
        todos=MemoryTodos(),
        output_dir=directory / ".out",
    )


def _call(directory: Path, tool: str, args: dict[str, Any], ctx: ToolContext | None = None) -> ToolPart:
    """Run the real tool and record its result in a part, as the loop does."""
    state = ToolState(status="running", input=args, time=ToolTime(start=1_000))
    try:
        result = run_tool(get_tool(tool), args, ctx or _ctx(directory))
    except ToolError as exc:
        state = state.model_copy(update={"status": "error", "error": str(exc)})
    else:
        state = state.model_copy(
            update={
                "status": "completed",
                "output": result.output,
                "title": result.title,
                "metadata": result.metadata,
                "attachments": result.attachments,
            }
        )
    state.time.end = 1_200
    return ToolPart(
        id="prt_1", session_id="ses_1", message_id="msg_1", call_id="call_1", tool=tool, state=state
    )


def _shown(part: ToolPart, *, cwd: Path | None = None, width: int = 100) -> str:
    console = Console(record=True, width=width, force_terminal=True)
    console.print(tool_line(part, cwd=cwd))
    return console.export_text().rstrip("\n")


def test_read_names_the_relative_path_and_counts_lines(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("".join(f"line {i}\n" for i in range(120)))
    part = _call(tmp_path, "read", {"filePath": str(tmp_path / "src" / "app.py")})
    assert _shown(part, cwd=tmp_path) == "● read src/app.py (120 lines)"


def test_read_of_a_long_file_says_truncated(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(3000)))
    part = _call(tmp_path, "read", {"filePath": "big.txt"})
    assert _shown(part) == "● read big.txt (2000 lines, truncated)"


def test_bash_failure_shows_the_exit_code(tmp_path: Path) -> None:
    part = _call(tmp_path, "bash", {"command": "echo oops; exit 3", "description": "fail on purpose"})
    assert _shown(part) == "● bash echo oops; exit 3 → exit 3"


def test_bash_success_counts_output_lines(tmp_path: Path) -> None:
    part = _call(tmp_path, "bash", {"command": "printf 'a\\nb\\n'", "description": "two lines"})
    assert _shown(part) == "● bash printf 'a\\nb\\n' (2 lines)"
    silent = _call(tmp_path, "bash", {"command": "true", "description": "nothing"})
    assert _shown(silent) == "● bash true (no output)"


def test_edit_error_gives_the_reason(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    ctx = _ctx(tmp_path)
    _call(tmp_path, "read", {"filePath": "app.py"}, ctx)
    part = _call(tmp_path, "edit", {"filePath": "app.py", "oldString": "y = 2", "newString": "y = 3"}, ctx)
    line = _shown(part)
    assert part.state.status == "error"
    assert line == "✗ edit app.py: Could not find oldString in the file."


def test_successful_edit_counts_added_and_removed_lines(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a\nb\nc\n")
    ctx = _ctx(tmp_path)
    _call(tmp_path, "read", {"filePath": "app.py"}, ctx)
    part = _call(tmp_path, "edit", {"filePath": "app.py", "oldString": "b\n", "newString": "B\nB2\n"}, ctx)
    assert _shown(part) == "● edit app.py (+2 −1)"


def test_glob_and_grep_count_results(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.txt"):
        (tmp_path / name).write_text("def main():\n    pass\n")
    assert _shown(_call(tmp_path, "glob", {"pattern": "*.py"})) == "● glob *.py (2 files)"
    grep = _call(tmp_path, "grep", {"pattern": "def main", "include": "*.py"})
    assert _shown(grep) == '● grep "def main" (*.py) (2 matches)'


def _bare(status: str, tool: str = "bash", **state: Any) -> ToolPart:
    return ToolPart(
        id="p",
        session_id="s",
        message_id="m",
        call_id="c",
        tool=tool,
        state=ToolState(status=status, **state),
    )


def test_pending_and_running_lines() -> None:
    assert _shown(_bare("pending")) == "◌ bash …"
    assert _shown(_bare("running", input={"command": "pytest -q"})) == "◌ bash pytest -q"


def test_spinner_line_has_the_activity() -> None:
    console = Console(record=True, width=100, force_terminal=True)
    console.print(tool_spinner(_bare("running", input={"command": "make test"})))
    text = console.export_text()
    assert text.rstrip().endswith("bash make test")
    assert len(text.splitlines()) == 1


def test_pruned_part_is_marked() -> None:
    part = _bare(
        "completed", input={"command": "ls"}, output="a\n", time=ToolTime(start=0, end=10, compacted=99)
    )
    assert _shown(part) == "● bash ls (1 line) [pruned]"


def test_slow_calls_show_their_duration() -> None:
    part = _bare("completed", input={"command": "sleep 4"}, time=ToolTime(start=0, end=4_300))
    assert _shown(part) == "● bash sleep 4 (no output) 4.3s"


@pytest.mark.parametrize("status", ["running", "completed", "error"])
def test_a_long_line_is_clipped_to_one_line(status: str) -> None:
    command = "echo " + "word " * 60 + "\nsecond line of the script"
    part = _bare(status, input={"command": command}, output="x\n", error="boom")
    text = _shown(part, width=60)
    assert "\n" not in text
    assert len(text) == 60
    assert text.endswith("…")


def test_unknown_tool_falls_back_to_title_or_arguments() -> None:
    titled = _bare("completed", tool="mcp_search", input={"q": "x"}, title="Searched the docs")
    assert _shown(titled) == "● mcp_search Searched the docs"
    untitled = _bare("completed", tool="mcp_search", input={"q": "rich live", "n": 3})
    assert _shown(untitled) == "● mcp_search q=rich live n=3"
