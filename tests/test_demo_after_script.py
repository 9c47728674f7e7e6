"""`agentcli demo` after its script: what a user tries next on the demo's session works."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from agentcli.demo import script
from agentcli.store.records import AssistantMessage, TextPart
from agentcli.ui.markdown_stream import MarkdownStream
from tests import zygote
from tests.terminal import PROMPT, Screen, leave, spawn
from tests.workspace import Workspace, agentcli_argv

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GLOB = re.compile(r"[\w./-]*\*[\w./-]*")  # a path pattern such as logs/app-*.log


def _demo_texts() -> list[str]:
    """Every markdown text the demo's model sends: the replies (the summary among them), the fallback."""
    replies = [reply for turn in script.turns(Path("/demo"), pace=0) for reply in turn.replies]
    return [r.text for r in replies if r.text] + [script.FALLBACK.text]


def _rendered(text: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system=None)
    stream = MarkdownStream(console)
    stream.append(text)
    stream.finish()
    return out.getvalue()


@pytest.mark.parametrize("text", _demo_texts(), ids=lambda t: t[:30])
def test_every_path_pattern_in_the_demos_text_survives_markdown(text: str) -> None:
    patterns = [g for g in _GLOB.findall(text) if "." in g or "/" in g]
    shown = _rendered(text)
    for pattern in patterns:
        assert pattern in shown, f"{pattern!r} lost in the rendering:\n{shown}"


def _stored_summaries(ws: Workspace) -> list[str]:
    store = ws.store()
    [session] = store.list_sessions()
    return [
        "".join(p.text for p in m.parts if isinstance(p, TextPart))
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage) and m.info.summary
    ]


def _until_prompt(child: pexpect.spawn) -> str:
    """What was shown up to the next prompt, without the terminal's escape codes."""
    child.expect(PROMPT)
    return _ESCAPES.sub("", str(child.before))


def test_compact_after_the_script_summarises_and_undo_takes_compacted_off_the_gauge(
    workspace: Workspace,
) -> None:
    size = (200, 80)  # an 80-column terminal, tall enough that nothing scrolls off
    env = {"TMPDIR": str(workspace.root)}
    child = spawn(workspace, "demo", "--fast", env=env, timeout=90, prompt=False, size=size)
    screen = Screen(child, size)
    child.expect("logs/app-\\*\\.log")  # the automatic compaction's summary, its pattern whole
    child.expect("The demo session is yours now")
    child.expect(PROMPT)
    for said in (
        "its answers and token counts are canned) works on a scratch project in",
        "the scripted model has no more script, but /context, /sessions, /compact and /help work;"
        " /model NAME switches to a real model.",
    ):
        assert screen.shows(said), f"{said!r} not whole on screen:\n{screen}"
    child.send("/compact\r")
    child.expect("compacting \\(manual\\)")
    shown = _until_prompt(child)
    assert "compacted:" in shown and "no more script" not in shown, shown
    assert "Traceback" not in shown and "error" not in shown, shown
    gauge = [line for line in shown.splitlines() if "context " in line]
    assert gauge and "compacted" in gauge[-1], shown
    child.send("/compact undo\r")
    child.expect("compaction undone")
    shown = _until_prompt(child)
    gauge = [line for line in shown.splitlines() if "context " in line]
    assert gauge and "compacted" not in gauge[-1], shown
    assert leave(child) == 0
    summaries = _stored_summaries(workspace)
    assert len(summaries) == 2
    assert "## Objective" in summaries[-1] and "no more script" not in summaries[-1]


def _agentcli(ws: Workspace, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(
        [*agentcli_argv(), *args],
        cwd=cwd,
        env={**ws.env, "TMPDIR": str(ws.root)},
        text=True,
        timeout=120,
        input="",
    )


def test_the_demo_session_can_be_viewed_and_says_why_it_cannot_go_on(workspace: Workspace) -> None:
    played = _agentcli(workspace, workspace.project, "demo", "--no-chat", "--fast")
    assert played.returncode == 0, played.stderr
    found = re.search(r"demo session (\S+) in (\S+)", played.stdout)
    assert found, played.stdout
    scratch = Path(found.group(2))

    context = _agentcli(workspace, scratch, "context")
    assert context.returncode == 0, context.stderr
    assert "window 128k" in context.stdout
    undone = _agentcli(workspace, scratch, "compact", "--undo")
    assert undone.returncode == 0, undone.stderr
    assert "compaction undone" in undone.stderr

    # Sending needs the demo's server: one line saying so, not "unknown model".
    resumed = _agentcli(workspace, scratch, "run", "-c", "what next?")
    assert resumed.returncode == 2
    assert "Traceback" not in resumed.stderr
    assert "answers only inside the demo" in resumed.stderr
    assert len(resumed.stderr.strip().splitlines()) == 1, resumed.stderr
