"""`agentcli sessions list|delete|rename|export|import`, OpenCode's export included."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.store.records import ToolPart
from tests.fakellm import FakeLLM, Reply, Usage
from tests.workspace import Workspace, assert_one_line_error

OPENCODE_EXPORT = Path(__file__).parent / "fixtures" / "opencode_export.json"


def _imported_id(stdout: str) -> str:
    return stdout.split()[1]


def test_an_opencode_export_imports_with_its_compaction_and_pruned_outputs(workspace: Workspace) -> None:
    proc = workspace.run("sessions", "import", str(OPENCODE_EXPORT), "--here")
    assert proc.returncode == 0, proc.stderr
    sid = _imported_id(proc.stdout)
    session = workspace.store().get_session(sid)
    assert session.title == "OC session" and session.directory == str(workspace.project)
    assert session.compactions == 1 and session.messages == 18
    messages = workspace.store().messages(sid)
    pruned = [p for m in messages for p in m.parts if isinstance(p, ToolPart) and p.state.time.compacted]
    assert len(pruned) == 2
    marker = next(m for m in messages if m.compaction() is not None).compaction()
    assert marker is not None and marker.auto and marker.tail_start_id in {m.id for m in messages}
    assert [m.id for m in messages] == sorted(m.id for m in messages)  # ids ordered as history
    listed = workspace.run("sessions", "list")
    assert sid in listed.stdout  # a session of this directory now


def test_an_imported_opencode_session_continues_from_its_summary(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    sid = _imported_id(workspace.run("sessions", "import", str(OPENCODE_EXPORT), "--here").stdout)
    fake_llm.push(Reply(text="Carrying on from the summary.", usage=Usage(3_000, 10)))
    proc = workspace.run("run", "--session", sid, "what is next?")
    assert proc.returncode == 0, proc.stderr
    assert "Carrying on from the summary." in proc.stdout
    sent = fake_llm.chat_requests()[-1].body["messages"]
    texts = [
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in sent
        if m.get("content")
    ]
    joined = "\n".join(texts)
    assert "What did we do so far?" in joined and "## Goal" in joined  # the compaction, as OpenCode sends it
    assert "read big 1-3" not in joined  # history before the compaction stays out of the window
    assert "third" in texts and "Fifth answer, the window is full now." in joined  # the kept tail
    assert sent[-1] == {"role": "user", "content": "what is next?"}


def test_json_export_is_complete_and_imports_back(workspace: Workspace, fake_llm: FakeLLM) -> None:
    sid = workspace.seed_turns(
        fake_llm,
        [
            ("first question", Reply(text="first answer", usage=Usage(900, 5))),
            ("second question", Reply(text="second answer", usage=Usage(1_200, 5))),
        ],
    )
    out = workspace.root / "s.json"
    assert workspace.run("sessions", "export", sid, "-o", str(out)).returncode == 0
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    before = json.loads(out.read_text())
    refused = workspace.run("sessions", "import", str(out))
    assert "already" in assert_one_line_error(refused)
    assert workspace.run("sessions", "delete", sid, "--yes").returncode == 0
    assert workspace.run("sessions", "import", str(out)).returncode == 0
    again = json.loads(workspace.run("sessions", "export", sid).stdout)
    assert again == before


def test_markdown_export_reads_as_a_transcript(workspace: Workspace) -> None:
    sid = _imported_id(workspace.run("sessions", "import", str(OPENCODE_EXPORT)).stdout)
    md = workspace.run("sessions", "export", sid, "--format", "md").stdout
    assert md.startswith("# OC session")
    assert "## Compaction (auto)" in md and "### Summary" in md and "## Goal" in md
    assert "*(pruned: hidden from the model since)*" in md


def test_rename_and_delete(workspace: Workspace) -> None:
    sid = workspace.store().create_session(str(workspace.project), "fake/test-model", title="old").id
    assert workspace.run("sessions", "rename", sid, "a better title").returncode == 0
    assert workspace.store().get_session(sid).title == "a better title"
    assert "--yes" in assert_one_line_error(workspace.run("sessions", "delete", sid))  # no terminal to ask
    assert workspace.store().list_sessions()  # still there
    assert workspace.run("sessions", "delete", sid[:12], "--yes").returncode == 0
    assert workspace.store().list_sessions() == []


def test_list_shows_this_directory_by_default_one_page_at_a_time(workspace: Workspace) -> None:
    store = workspace.store()
    elsewhere = store.create_session("/somewhere/else", title="elsewhere").id
    here = [store.create_session(str(workspace.project), title=f"here {i}").id for i in range(25)]
    listed = workspace.run("sessions", "list")
    assert elsewhere not in listed.stdout
    assert sum(sid in listed.stdout for sid in here) == 20
    assert "--all" in listed.stderr and "-n" in listed.stderr
    everything = json.loads(workspace.run("sessions", "list", "--all", "-n", "100", "--json").stdout)
    assert {s["id"] for s in everything} == {elsewhere, *here}


def test_import_of_something_else_is_one_line(workspace: Workspace) -> None:
    bad = workspace.root / "bad.json"
    bad.write_text('{"hello": 1}')
    assert "export" in assert_one_line_error(workspace.run("sessions", "import", str(bad)))
    bad.write_text("not json")
    assert_one_line_error(workspace.run("sessions", "import", str(bad)))
    assert_one_line_error(workspace.run("sessions", "import", str(workspace.root / "missing.json")))
