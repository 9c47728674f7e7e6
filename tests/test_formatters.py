"""OpenCode's ``formatter``: after a successful edit/write inside the project, the formatters for
the file's extension run (custom ones from the config, built-ins whose program is on PATH) and the
model is told which one changed the file; ``"formatter": false`` turns them all off."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace

UPPER = [
    sys.executable,
    "-c",
    "import sys; p = sys.argv[1]; t = open(p).read(); open(p, 'w').write(t.upper())",
    "$FILE",
]


def _tool_result(fake_llm: FakeLLM) -> str:
    return next(m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool")


def _write(workspace: Workspace, fake_llm: FakeLLM, name: str, content: str) -> None:
    fake_llm.push(
        Reply(tool_calls=[ToolCall("write", {"filePath": name, "content": content})], usage=Usage(100, 5)),
        Reply(text="Done.", usage=Usage(120, 5)),
    )
    proc = workspace.run("run", "--yes", "write it")
    assert proc.returncode == 0, proc.stderr


def test_a_custom_formatter_runs_after_write_and_the_model_is_told(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"formatter": {"upper": {"command": UPPER, "extensions": [".txt"]}}})
    _write(workspace, fake_llm, "notes.txt", "hello\n")
    assert (workspace.project / "notes.txt").read_text() == "HELLO\n"
    assert "The file was formatted by upper" in _tool_result(fake_llm)
    _write(workspace, fake_llm, "other.md", "hello\n")  # another extension: left alone
    assert (workspace.project / "other.md").read_text() == "hello\n"
    assert "formatted" not in _tool_result(fake_llm)


def test_a_custom_formatter_runs_after_edit(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"formatter": {"upper": {"command": UPPER, "extensions": [".txt"]}}})
    path = workspace.project / "notes.txt"
    path.write_text("one\ntwo\n")
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "notes.txt"})], usage=Usage(100, 5)),
        Reply(
            tool_calls=[
                ToolCall("edit", {"filePath": "notes.txt", "oldString": "two", "newString": "three"})
            ],
            usage=Usage(110, 5),
        ),
        Reply(text="Done.", usage=Usage(120, 5)),
    )
    proc = workspace.run("run", "--yes", "edit it")
    assert proc.returncode == 0, proc.stderr
    assert path.read_text() == "ONE\nTHREE\n"
    results = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert "The file was formatted by upper" in results[-1]


def test_formatter_false_turns_every_formatter_off(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"formatter": False})
    (workspace.project / "ruff.toml").write_text("")
    _write(workspace, fake_llm, "mod.py", "x=1\n")
    assert (workspace.project / "mod.py").read_text() == "x=1\n"


def test_ruff_formats_python_when_the_project_configures_ruff(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not on PATH (the test extras install it)")
    workspace.write_config()
    (workspace.project / "ruff.toml").write_text("")
    _write(workspace, fake_llm, "mod.py", "x=1\n")
    assert (workspace.project / "mod.py").read_text() == "x = 1\n"
    assert "The file was formatted by ruff" in _tool_result(fake_llm)


def test_without_a_ruff_config_python_is_left_as_written(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config()  # OpenCode runs ruff only for a project that uses it
    _write(workspace, fake_llm, "mod.py", "x=1\n")
    assert (workspace.project / "mod.py").read_text() == "x=1\n"
    assert json.dumps(_tool_result(fake_llm)).count("formatted") == 0


def test_a_file_outside_the_project_is_not_formatted(tmp_path: Path) -> None:
    from agentcli.config.model import FormatterConfig
    from agentcli.tools.formatters import Formatters

    outside = tmp_path / "outside.txt"
    outside.write_text("hello\n")
    project = tmp_path / "project"
    project.mkdir()
    formatters = Formatters.from_config({"upper": FormatterConfig(command=UPPER, extensions=[".txt"])})
    assert formatters.apply(outside, project) == []
    assert outside.read_text() == "hello\n"
