"""A tool call's metadata: written and read through one typed model, stored under OpenCode's names."""

from __future__ import annotations

from agentcli.store.records import FileDiff, ToolMetadata, ToolState


def test_stored_json_names_read_as_typed_fields_and_are_written_back_the_same() -> None:
    stored = {
        "output": "boom",
        "exit": None,
        "truncated": True,
        "outputPath": "/tmp/out.txt",
        "timedOut": True,
        "filediff": {"file": "a.py", "patch": "@@", "additions": 2, "deletions": 1},
        "sessionId": "ses_child",
        "preview": "a tool's own key",
    }
    meta = ToolState(status="completed", metadata=stored).meta
    assert (meta.output_path, meta.timed_out, meta.truncated, meta.session_id) == (
        "/tmp/out.txt",
        True,
        True,
        "ses_child",
    )
    assert meta.filediff == FileDiff(file="a.py", patch="@@", additions=2, deletions=1)
    assert meta.dump() == stored  # the same keys, the same values: old sessions load and save unchanged


def test_a_value_of_the_wrong_type_is_left_out_of_the_typed_fields_not_failing_the_read() -> None:
    meta = ToolMetadata.of({"exit": "not a number", "timedOut": True, "todos": "nope"})
    assert meta.exit is None and meta.todos is None and meta.timed_out is True


def test_only_the_fields_given_are_written() -> None:
    assert ToolMetadata(truncated=True, output_path="/x").dump() == {"truncated": True, "outputPath": "/x"}
    assert ToolMetadata(exit=None).dump() == {"exit": None}  # bash: no exit code is said, not left out
