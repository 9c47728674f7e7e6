"""Background compaction (``compaction.background``, ``compaction.background_at``): past the threshold the
summary of the older part is written while the turn goes on; when compaction is due it is swapped in
at once, the messages after its cut kept verbatim. The loop runs in-process against the scripted
server and a real SQLite store; the summary request is held open by the server to show the model's
steps are not blocked by it (request order, never wall clock).

``{"background": false, "request": "transcript"}`` reproduces the requests of the code before
background compaction existed, byte for byte (the fixture was recorded from it)."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.demo.replies import is_summary_request
from agentcli.session.loop import SessionLoop
from agentcli.store.records import AssistantMessage, CompactionPart, WithParts
from tests.fakellm import ErrorResponse, FakeLLM, Recorded, Reply, ToolCall, Usage
from tests.test_compaction_request import OPENAI, _loop
from tests.test_history import SES

FIXTURE = Path(__file__).parent / "fixtures" / "compaction_requests" / "opencode_session.json"
# A 100k context with an 8k output limit: usable 92,000 tokens.
LOW, MID, OVER = Usage(30_000, 10), Usage(60_000, 10), Usage(93_000, 10)
FILES = [f"mod{i}.py" for i in range(8)]


def _reads(*usages: Usage) -> list[Reply]:
    """One step per usage, each reading the next file (the session's history grows)."""
    return [
        Reply(text=f"Reading {FILES[i]}.", tool_calls=[ToolCall("read", {"filePath": FILES[i]})], usage=u)
        for i, u in enumerate(usages)
    ]


def _start(tmp: Path, server: FakeLLM, compaction: dict[str, Any] | None) -> SessionLoop:
    loop = _loop(tmp, server, OPENAI, compaction)
    project = loop.runtime.options.directory
    for i, name in enumerate(FILES):
        (project / name).write_text(f"def f{i}(x):\n    return x + {i}  # line of {name}\n")
    return loop


def _bodies(server: FakeLLM, tmp: Path) -> list[dict[str, Any]]:
    """The chat requests sent, without what changes from run to run (the temporary paths, the date,
    the model's name)."""
    out = []
    for rec in server.chat_requests():
        text = json.dumps({k: v for k, v in rec.body.items() if k != "model"}, sort_keys=True)
        text = text.replace(str(tmp), "<tmp>")
        text = re.sub(r"Today's date: [A-Za-z]{3} [A-Za-z]{3} \d\d \d{4}", "Today's date: <date>", text)
        out.append(json.loads(text))
    return out


def _finish(loop: SessionLoop) -> None:
    if loop.title_thread is not None:
        loop.title_thread.join(10)
    loop.runtime.store.close()


def test_the_opencode_keys_reproduce_the_requests_of_before_background_compaction(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn that climbs past the background threshold, then past the usable window (an automatic
    compaction mid-turn), then a second turn: every request body as the code before sent it."""
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, {"background": False, "request": "transcript"})
    fake_llm.push(
        *_reads(LOW, MID, Usage(80_000, 10), OVER),
        Reply(text="## Objective\n- read the modules"),  # the summary
        Reply(text="All eight modules add their index.", usage=Usage(20_000, 10)),
    )
    loop.prompt(SES, "read the modules one by one")
    fake_llm.push(*_reads(MID, OVER), Reply(text="## Objective\n- again"), Reply(text="Done.", usage=LOW))
    loop.prompt(SES, "read them again")
    _finish(loop)
    got = _bodies(fake_llm, tmp_path)
    if os.environ.get("AGENTCLI_UPDATE_GOLDEN"):
        FIXTURE.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert sum(is_summary_request(b) for b in got) == 2
    assert got == json.loads(FIXTURE.read_text())
