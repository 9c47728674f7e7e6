"""Startup is a feature: the light commands never import litellm (it takes seconds to import)."""

from __future__ import annotations

import subprocess

import pytest

from tests.dbs import on_postgres
from tests.workspace import Workspace, agentcli_argv


def imported_modules(ws: Workspace, *args: str) -> set[str]:
    proc = subprocess.run(
        [*agentcli_argv(), *args],
        cwd=ws.project,
        env={**ws.env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {
        line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("sessions", "list"),
        ("sessions", "list", "--json"),
        ("config", "list"),
        ("config", "path"),
        ("sessions", "--help"),
        ("run", "--help"),
        ("models", "gpt-4o"),
    ],
)
def test_light_commands_never_import_litellm(workspace: Workspace, args: tuple[str, ...]) -> None:
    modules = imported_modules(workspace, *args)
    assert "typer" in modules  # the probe works: imports are being reported
    assert not any(m == "litellm" or m.startswith("litellm.") for m in modules)


def test_sessions_show_never_imports_litellm(workspace: Workspace) -> None:
    store = workspace.store()
    sid = store.create_session(str(workspace.project), "fake/test-model", title="t").id
    modules = imported_modules(workspace, "sessions", "show", sid)
    assert "litellm" not in modules


def test_version_output() -> None:
    proc = subprocess.run([*agentcli_argv(), "--version"], capture_output=True, text=True, timeout=30)
    from agentcli import __version__

    assert proc.stdout.strip() == f"agentcli {__version__}"


def test_help_lists_every_command_including_the_lazily_mounted_config() -> None:
    proc = subprocess.run([*agentcli_argv(), "--help"], capture_output=True, text=True, timeout=30)
    for command in ("chat", "run", "compact", "models", "sessions", "config"):
        assert f"  {command} " in proc.stdout, proc.stdout


def test_a_turn_on_the_lean_path_never_imports_litellm(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply, ToolCall

    fake_llm.push(
        Reply(text="Looking.", tool_calls=[ToolCall("glob", {"pattern": "*.py"})]), Reply(text="hi there")
    )
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"  # the default choice, even when the suite runs forced
    modules = imported_modules(workspace, "run", "--yes", "say hi")
    assert "agentcli.llm.lean_path" in modules  # the probe works: the turn ran on the lean path
    assert not any(m == "litellm" or m.startswith(("litellm.", "openai")) for m in modules)
    assert "agentcli.llm.warm" not in modules  # nor rehearses litellm's first stream
    [session] = workspace.store().list_sessions()
    assert session.title == "Scripted title" and session.tokens.total > 0  # title and usage without litellm


def test_a_repl_on_the_lean_path_never_imports_litellm(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    """Not while it waits for the first message (when a litellm model's first stream is rehearsed in
    the background), nor for a turn."""
    import io

    import pexpect

    from tests.fakellm import Reply
    from tests.terminal import PROMPT, say, spawn

    fake_llm.push(Reply(text="hi there"))
    env = {"AGENTCLI_LLM_PATH": "lean", "PYTHONPROFILEIMPORTTIME": "1"}  # imports reported on the terminal
    child = spawn(workspace, env=env, prompt=False)
    shown = io.StringIO()
    child.logfile_read = shown
    child.expect(PROMPT)
    say(child, "say hi", "hi there")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    lines = shown.getvalue().splitlines()
    modules = {line.split("|")[-1].strip() for line in lines if "import time:" in line}
    assert "agentcli.llm.lean_path" in modules  # the probe works: the turn ran on the lean path
    assert not any(m == "litellm" or m.startswith(("litellm.", "openai")) for m in modules)
    assert "agentcli.llm.warm" not in modules


def _loads_mcp(modules: set[str]) -> bool:
    return any(m == "mcp" or m.startswith("mcp.") for m in modules)


@pytest.mark.parametrize("args", [("--help",), ("sessions", "list"), ("mcp", "--help")])
def test_light_commands_never_import_the_mcp_sdk(workspace: Workspace, args: tuple[str, ...]) -> None:
    workspace.write_config({"mcp": {"x": {"type": "local", "command": ["never-started"]}}})
    modules = imported_modules(workspace, *args)
    assert "typer" in modules and not _loads_mcp(modules)


def test_a_turn_without_mcp_servers_never_imports_the_mcp_sdk(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply, ToolCall

    workspace.write_config({"mcp": {"off": {"type": "local", "command": ["x"], "enabled": False}}})
    fake_llm.push(Reply(tool_calls=[ToolCall("glob", {"pattern": "*.py"})]), Reply(text="hi there"))
    modules = imported_modules(workspace, "run", "--yes", "say hi")
    assert "agentcli.session.loop" in modules  # the probe works: the turn ran
    assert not _loads_mcp(modules)


def test_a_piped_turn_on_sqlite_loads_neither_postgresql_nor_the_markdown_renderer(
    workspace: Workspace, fake_llm
) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply

    if on_postgres():
        pytest.skip("the PostgreSQL pass: its dialect is the one the store needs")
    fake_llm.push(Reply(text="**hi** there"))
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"
    modules = imported_modules(workspace, "run", "say hi")  # stdout is a pipe: the answer is written raw
    assert "agentcli.store.store" in modules  # the probe works: the turn was stored
    assert not any(m.startswith("sqlalchemy.dialects.postgresql") for m in modules)
    assert not any(m.startswith(("markdown_it", "agentcli.ui.markdown_stream")) for m in modules)
    assert "httpx" in modules and not {"click", "pygments"} & modules  # what httpx's own CLI imports
    assert "agentcli.mcp.host" not in modules  # no MCP server configured


def test_a_turn_without_tool_calls_loads_no_orm_no_http2_and_none_of_the_tools_parsers(
    workspace: Workspace, fake_llm
) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply

    fake_llm.push(Reply(text="hi there"))
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"
    modules = imported_modules(workspace, "run", "say hi")
    assert "agentcli.store.store" in modules and "sqlalchemy" in modules  # the probe works
    # SQLAlchemy's ORM and SQLModel (a fifth of a short turn's CPU): the store speaks Core.
    assert not any(m.split(".")[0] == "sqlmodel" or m.startswith("sqlalchemy.orm") for m in modules)
    # What only a tool call needs: bash's shell grammars, webfetch's HTML parser.
    assert not {"agentcli.tools.shell_commands", "agentcli.tools.html_convert", "html.parser"} & modules
    assert "httpcore" in modules and "hpack" not in modules  # HTTP/2's stack, never spoken here
    [session] = workspace.store().list_sessions()
    assert session.title == "Scripted title" and session.messages == 2


def test_the_litellm_path_can_be_forced(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply

    fake_llm.push(Reply(text="hi there"))
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "litellm"
    modules = imported_modules(workspace, "run", "say hi")
    assert "litellm" in modules and "agentcli.llm.lean_path" not in modules


# The process leaves without the interpreter's teardown (agentcli.cli.process.finish): whatever a
# command wrote must still reach the reader whole, and its exit code must be kept.


def test_a_large_answer_piped_out_of_run_arrives_whole(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply, Usage

    answer = "".join(f"line {i} of a long answer\n" for i in range(6_000))  # 160 KB, well inside the context
    fake_llm.push(Reply(text=answer, chunk_size=4096, usage=Usage(500, 40_000)))
    workspace.write_config(output=64_000)  # 40k tokens of answer: inside the model's output limit
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"
    proc = workspace.run("run", "write a lot")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip("\n") == answer.rstrip("\n")


def test_a_large_session_export_piped_to_stdout_is_whole_json(workspace: Workspace) -> None:
    import json

    from agentcli.store import ids
    from agentcli.store.records import TextPart, UserMessage

    store = workspace.store()
    sid = store.create_session(str(workspace.project), "fake/test-model", title="big").id
    for n in range(40):
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
        store.put_message(msg)
        store.put_part(
            TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=f"{n} " + "x" * 50_000)
        )
    store.close()
    proc = workspace.run("sessions", "export", sid)
    assert proc.returncode == 0, proc.stderr[-2000:]
    exported = json.loads(proc.stdout)  # 2 MB, cut nowhere
    assert len(exported["messages"]) == 40


def test_a_failing_command_keeps_its_exit_code_and_message(workspace: Workspace) -> None:
    proc = workspace.run("sessions", "show", "no-such-session")
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "agentcli: error: no session matches 'no-such-session' (see `agentcli sessions list`)"
    )


def test_startup_defers_collection_and_settling_restores_it_with_the_loaded_objects_frozen() -> None:
    import gc

    from agentcli.cli import process

    before, frozen = gc.get_threshold(), gc.get_freeze_count()  # the suite froze what it collected
    try:
        process.start()
        assert gc.get_threshold()[0] == process.STARTUP_THRESHOLD
        process.settle()
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() > frozen  # what startup loaded is never scanned again
    finally:
        gc.set_threshold(*before)


def test_ctrl_c_while_agentcli_is_still_loading_is_quiet(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    import signal
    import time

    from tests.fakellm import Reply

    # Python's own start-up (its site module) and the console-script wrapper pip writes are not ours
    # to quiet: the signal goes once agentcli's entry has begun loading the command (the import report
    # on stderr names the entry module, then the first module it loads), a little later each time.
    for delay in (0.0, 0.03, 0.1, 0.2):
        fake_llm.push(Reply(text="hi"))
        child = subprocess.Popen(
            [*agentcli_argv(), "run", "say hi"],
            cwd=workspace.project,
            env={**workspace.env, "PYTHONPROFILEIMPORTTIME": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stderr is not None
        lines: list[str] = []
        while len(lines) < 2 or not lines[-2].rstrip().endswith("agentcli.cli.process"):
            line = child.stderr.readline()
            assert line, f"agentcli ended before loading its command: {''.join(lines)[-2000:]}"
            lines.append(line)
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, (
            f"after {delay} s: {stderr[-2000:]}"
        )
        assert child.returncode in (130, 0), (delay, child.returncode)  # 0: the turn was over already
