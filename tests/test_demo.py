"""`agentcli demo`: a real session with the bundled scripted model, no key and no network."""

from __future__ import annotations

import re
from pathlib import Path

from agentcli.store.records import AssistantMessage, ToolPart
from tests import zygote
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace, agentcli_argv


def _demo_env(ws: Workspace) -> dict[str, str]:
    # No provider key anywhere, and the scratch project under the test's own temp dir.
    return {"TMPDIR": str(ws.root)}


def _check_session(ws: Workspace, scratch: Path) -> None:
    assert 'return "Hello, " + name' in (scratch / "hello.py").read_text()  # the edit really happened
    assert (scratch / "NOTES.md").exists()
    store = ws.store()
    [session] = store.list_sessions()
    assert session.directory == str(scratch)
    assert session.compactions == 1
    messages = store.messages(session.id)
    assert any(isinstance(m.info, AssistantMessage) and m.info.summary for m in messages)
    pruned = [p for m in messages for p in m.parts if isinstance(p, ToolPart) and p.state.time.compacted]
    assert pruned


def test_demo_plays_a_session_and_leaves_the_user_in_the_chat(workspace: Workspace) -> None:
    child = spawn(workspace, "demo", "--fast", env=_demo_env(workspace), timeout=90, prompt=False)
    # (the path may wrap onto the next line, after the terminal's style codes)
    child.expect(r"scratch project in(?:\s|\x1b\[[0-9;]*m)+(/[\w/.-]*?agentcli-demo-\w+)")
    scratch = Path(child.match.group(1))
    child.expect("edit.{0,20} hello.py")
    child.expect(r"context .*% · ")  # the gauge after the first turn
    child.expect("pruned")
    child.expect("compacting")
    child.expect("compacted")
    child.expect("The demo session is yours now")
    child.expect(PROMPT)
    child.send("/sessions\r")
    child.expect("Demo")
    child.expect("number to switch to")
    say(child, "")  # Enter: stay on the demo session
    say(child, "what next?", "no more script")
    assert leave(child) == 0
    _check_session(workspace, scratch)


def test_demo_without_chat_runs_to_the_end_off_a_terminal(workspace: Workspace) -> None:

    proc = zygote.run(
        [*agentcli_argv(), "demo", "--no-chat", "--fast"],
        cwd=workspace.project,
        env={**workspace.env, **_demo_env(workspace)},
        text=True,
        timeout=120,
        input="",
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    found = re.search(r"demo session (\S+) in (\S+)", proc.stdout)
    assert found, proc.stdout
    assert "compacted" in proc.stderr and "pruned" in proc.stderr
    _check_session(workspace, Path(found.group(2)))
