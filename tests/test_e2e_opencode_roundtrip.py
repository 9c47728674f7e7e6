"""Sessions both ways with OpenCode 1.18.33 itself (npm's opencode-ai, installed by .ci/run):
`agentcli sessions export --format opencode` → `opencode import` → `opencode export` → `agentcli sessions
import`, and OpenCode's own export through agentcli and back. OpenCode runs with its data in a
temporary HOME/XDG tree, auto-update and sharing off, and never needs the network for these commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace

OPENCODE_EXPORT = Path(__file__).parent / "fixtures" / "opencode_export.json"
PREFIX_VAR = "AGENTCLI_TEST_OPENCODE_PREFIX"  # the npm prefix .ci/run installs opencode-ai@1.18.33 into


def _opencode_bin() -> Path:
    prefix = os.environ.get(PREFIX_VAR)
    if prefix:
        binary = Path(prefix) / "node_modules" / ".bin" / "opencode"
        assert binary.exists(), f"{PREFIX_VAR}={prefix} but {binary} is missing"
        return binary
    found = shutil.which("opencode")
    if found is None:
        pytest.skip(f"OpenCode 1.18.33 not installed: .ci/run installs it from npm and sets {PREFIX_VAR}")
    return Path(found)


class OpenCode:
    def __init__(self, home: Path, project: Path) -> None:
        self.binary = _opencode_bin()
        self.project = project
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_"))}
        self.env.update(
            HOME=str(home),
            XDG_DATA_HOME=str(home / "data"),
            XDG_CONFIG_HOME=str(home / "config"),
            XDG_CACHE_HOME=str(home / "cache"),
            XDG_STATE_HOME=str(home / "state"),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        )
        version = self.run("--version").stdout.strip()
        assert version == "1.18.33", version

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(self.binary), *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc

    def round_trip(self, path: Path) -> dict[str, Any]:
        """`opencode import` the file, then `opencode export` the session it names."""
        sid = json.loads(path.read_text())["info"]["id"]
        assert f"Imported session: {sid}" in self.run("import", str(path)).stdout
        return json.loads(self.run("export", sid).stdout)


@pytest.fixture
def opencode(workspace: Workspace) -> OpenCode:
    return OpenCode(workspace.root / "oc-home", workspace.project)


def _export(workspace: Workspace, sid: str) -> Path:
    out = workspace.root / f"{sid}.opencode.json"
    proc = workspace.run("sessions", "export", sid, "--format", "opencode", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def _records(data: dict[str, Any]) -> list[Any]:
    """Messages, tool calls and compaction markers as OpenCode holds them, ids by position."""
    ids: dict[str, str] = {}

    def ref(value: str | None) -> str | None:
        return None if value is None else ids.setdefault(value, f"#{len(ids)}")

    out = []
    for entry in data["messages"]:
        info = entry["info"]
        parts = []
        for p in entry["parts"]:
            state = p.get("state") or {}
            parts.append(
                (p["type"], p.get("text"), p.get("auto"), p.get("overflow"), ref(p.get("tail_start_id")),
                 p.get("tool"), p.get("callID"), json.dumps(state.get("input"), sort_keys=True),
                 state.get("status"), state.get("output"), (state.get("time") or {}).get("compacted"))
            )  # fmt: skip
        out.append((ref(info["id"]), info["role"], info.get("summary") is True, info.get("finish"), parts))
    return out


def _agentcli_session(workspace: Workspace, fake_llm: FakeLLM) -> str:
    notes = workspace.project / "notes.txt"
    notes.write_text("one\ntwo\n")
    fake_llm.push(Reply(tool_calls=[ToolCall("read", {"filePath": str(notes)})], usage=Usage(900, 5)))
    edit = {"filePath": str(notes), "oldString": "two", "newString": "2"}
    fake_llm.push(Reply(tool_calls=[ToolCall("edit", edit)], usage=Usage(950, 5)))
    sid = workspace.seed_turns(
        fake_llm,
        [
            ("read and fix notes.txt", Reply(text="Fixed line 2.", usage=Usage(1_000, 5))),
            ("thanks", Reply(text="You're welcome.", usage=Usage(1_100, 5))),
        ],
    )
    workspace.seed_compaction(fake_llm, Reply(text="## Goal\nfix notes.txt", usage=Usage(1_200, 20)), sid)
    return sid


def test_opencode_imports_an_agentcli_session_and_gives_it_back_whole(
    workspace: Workspace, fake_llm: FakeLLM, opencode: OpenCode
) -> None:
    sid = _agentcli_session(workspace, fake_llm)
    sent = _export(workspace, sid)
    back = opencode.round_trip(sent)
    ours = json.loads(sent.read_text())
    assert _records(back) == _records(ours)  # messages, tool calls and the compaction marker
    tools = [p["tool"] for m in back["messages"] for p in m["parts"] if p["type"] == "tool"]
    assert tools == ["read", "edit"]
    assert sum(p["type"] == "compaction" for m in back["messages"] for p in m["parts"]) == 1

    # And into agentcli again: the same session, agentcli's own fields (undo data, carryover) included.
    from_oc = workspace.root / "from-opencode.json"
    from_oc.write_text(json.dumps(back))
    proc = workspace.run("sessions", "import", str(from_oc))
    assert proc.returncode == 0, proc.stderr
    new_sid = proc.stdout.split()[1]
    store = workspace.store()
    before, after = store.messages(sid), store.messages(new_sid)
    strip = {"id", "session_id", "message_id", "parent_id", "tail_start_id", "carryover"}

    def dump(messages: list[Any]) -> list[Any]:
        return [
            (m.info.model_dump(exclude=strip), [p.model_dump(exclude=strip) for p in m.parts])
            for m in messages
        ]

    assert dump(after) == dump(before)
    assert any(p.type == "carryover" for m in after for p in m.parts)
    assert store.get_session(new_sid).compactions == 1


def test_an_opencode_session_goes_through_agentcli_and_back_into_opencode(
    workspace: Workspace, opencode: OpenCode
) -> None:
    original = json.loads(OPENCODE_EXPORT.read_text())
    proc = workspace.run("sessions", "import", str(OPENCODE_EXPORT), "--here")
    assert proc.returncode == 0, proc.stderr
    back = opencode.round_trip(_export(workspace, proc.stdout.split()[1]))
    assert _records(back) == _records(original)
    assert back["info"]["title"] == original["info"]["title"]
