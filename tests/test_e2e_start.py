"""The first minutes: bare `agentcli` opens the chat, `-h` is `--help`."""

from __future__ import annotations

from tests import zygote
from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace, agentcli_argv


def test_bare_agentcli_starts_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hi there from a bare start", usage=Usage(700, 5)))
    child = spawn(workspace)
    say(child, "hello", "Hi there from a bare start")
    assert leave(child) == 0


def test_dash_h_is_help_everywhere(workspace: Workspace) -> None:
    for args in ((), ("sessions",), ("run",)):
        long = workspace.run(*args, "--help")
        short = workspace.run(*args, "-h")
        assert short.returncode == 0, short.stderr
        assert short.stdout == long.stdout
        assert "Usage:" in short.stdout


def test_bare_agentcli_in_a_pipe_points_to_run(workspace: Workspace) -> None:
    proc = zygote.run(
        agentcli_argv(),
        cwd=workspace.project,
        env=workspace.env,
        input="",
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "agentcli run" in proc.stderr and "Traceback" not in proc.stderr


def _no_network(ws: Workspace) -> None:
    # Should a request slip through to a real provider, it dies at a dead local proxy instead.
    from tests.fakellm import unused_port

    ws.extra_env["HTTPS_PROXY"] = ws.extra_env["HTTP_PROXY"] = f"http://127.0.0.1:{unused_port()}"


def test_run_without_the_provider_key_says_which_variable_before_any_request(workspace: Workspace) -> None:
    _no_network(workspace)
    proc = workspace.run("run", "--model", "anthropic/claude-sonnet-4-20250514", "hello")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "ANTHROPIC_API_KEY" in line and "agentcli demo" in line
    assert workspace.store().list_sessions() == []  # nothing was started


def test_chat_without_the_provider_key_says_so_at_startup_and_sends_nothing(workspace: Workspace) -> None:
    _no_network(workspace)
    child = spawn(workspace, "chat", "--model", "openai/gpt-4o", prompt=False)
    child.expect("OPENAI_API_KEY")
    child.expect("agentcli demo")
    child.expect(PROMPT)
    say(child, "hello", "error:.*OPENAI_API_KEY")
    assert leave(child) == 0
    assert all(
        not m.parts or m.role != "assistant"
        for s in workspace.store().list_sessions()
        for m in workspace.store().messages(s.id)
    )


def test_slash_model_checks_the_name_at_once(workspace: Workspace, fake_llm: FakeLLM) -> None:
    child = spawn(workspace)
    say(child, "/model openai/gpt-4o", "OPENAI_API_KEY")
    say(child, "/model no-such-provider-model", "unknown model")
    child.send("/model\r")
    child.expect("model: fake/test-model")  # the old model is kept
    child.expect(PROMPT)
    assert leave(child) == 0
    assert fake_llm.chat_requests() == []
