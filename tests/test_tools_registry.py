from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.tools import TOOL_NAMES, all_tools, available_skills, get_tool, truncate_output
from agentcli.tools.base import ToolError
from tests.test_tools_support import call, make_ctx


def test_tool_names_and_schemas_match_opencode():
    assert TOOL_NAMES == [
        "bash", "read", "glob", "grep", "list", "edit", "write", "webfetch", "todowrite", "todoread", "skill"
    ]  # fmt: skip
    schemas = {t.name: t.schema()["function"] for t in all_tools()}
    assert schemas["read"]["parameters"]["required"] == ["filePath"]
    assert set(schemas["edit"]["parameters"]["properties"]) == {
        "filePath",
        "oldString",
        "newString",
        "replaceAll",
    }
    assert set(schemas["bash"]["parameters"]["properties"]) == {
        "command",
        "timeout",
        "workdir",
        "description",
    }
    json.dumps(schemas)  # every schema is plain JSON


def test_parameter_schemas_are_generated_from_the_params_models_byte_for_byte_as_before():
    """The schemas come from each tool's pydantic model; the bytes sent stay OpenCode's (key order
    included), as they were when the schemas were written by hand (the fixture)."""
    from agentcli.session.agents.subagent import TaskParams
    from agentcli.tools.params import params_schema

    expected = json.loads((Path(__file__).parent / "fixtures" / "tool_parameters.json").read_text())
    got = {t.name: t.parameters for t in all_tools()} | {"task": params_schema(TaskParams)}
    assert list(got) == list(expected)
    for name, schema in expected.items():
        assert json.dumps(got[name]) == json.dumps(schema), name


def test_bad_json_names_tool_and_error(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    with pytest.raises(ToolError) as err:
        call(ctx, "read", '{"filePath": "a.txt"')
    msg = str(err.value)
    assert msg.startswith("Invalid arguments for read: the arguments are not valid JSON (")
    assert "line 1 column" in msg and "\n" not in msg
    with pytest.raises(ToolError, match="expected a JSON object, got list"):
        call(ctx, "read", "[1, 2]")


def test_schema_problems_are_reported_together(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    with pytest.raises(ToolError) as err:
        call(ctx, "edit", {"filePath": 3, "oldString": "a"})
    msg = str(err.value)
    assert msg.startswith("Invalid arguments for edit: ")
    assert "missing required parameter newString" in msg
    assert "filePath must be a string, got number" in msg
    with pytest.raises(ToolError, match=r"missing required parameter todos\[0\]\.content"):
        call(ctx, "todowrite", {"todos": [{"status": "pending", "priority": "high"}]})
    with pytest.raises(ToolError, match=r"todos\[0\]\.status must be one of"):
        call(ctx, "todowrite", {"todos": [{"content": "x", "status": "doing", "priority": "high"}]})


def test_lenient_coercions(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "f.txt").write_text("a\nb\nc\n")
    # offset as a string, limit as an integral float, a null optional and an unknown key
    res = call(ctx, "read", '{"filePath": "f.txt", "offset": "2", "limit": 1.0, "extra": true}')
    assert "2: b\n\n(Showing lines 2-2 of 3" in res.output
    res = call(ctx, "glob", {"pattern": "*.txt", "path": None})
    assert res.output == str(ctx.directory / "f.txt")


def test_unknown_tool():
    with pytest.raises(ToolError, match="Unknown tool: 'nope'. Available tools: bash, read"):
        get_tool("nope")


def test_unexpected_exceptions_become_one_line_errors(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    latin = ctx.directory / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    call(ctx, "read", {"filePath": "latin.txt"})
    with pytest.raises(
        ToolError, match=r"^Cannot decode the file as utf-8 text \(invalid byte at position 3\)$"
    ):
        call(ctx, "edit", {"filePath": "latin.txt", "oldString": "caf", "newString": "tea"})
    (ctx.directory / "plain").write_text("a file, not a folder")
    with pytest.raises(ToolError) as err:
        call(ctx, "write", {"filePath": "plain/child.txt", "content": "x"})
    assert "plain" in str(err.value) and "\n" not in str(err.value) and "Traceback" not in str(err.value)


def test_aborted_context_runs_nothing(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    ctx.abort.set()
    with pytest.raises(ToolError, match="aborted"):
        call(ctx, "bash", {"command": f"touch {tmp_path / 'ran'}", "description": "d"})
    assert not (tmp_path / "ran").exists()


def test_truncate_output_head_and_tail(tmp_path):
    text = "\n".join(f"line {i}" for i in range(10))
    same = truncate_output(text, max_lines=10, max_bytes=1000, output_dir=tmp_path)
    assert same.content == text and not same.truncated and not list(tmp_path.iterdir())

    head = truncate_output(text, max_lines=3, max_bytes=1000, output_dir=tmp_path)
    assert head.truncated and head.output_path and head.output_path.read_text() == text
    assert head.content.startswith("line 0\nline 1\nline 2\n\n...7 lines truncated...\n\n")
    assert f"Full output saved to: {head.output_path}" in head.content
    assert "grep tool" in head.content and "offset/limit" in head.content

    tail = truncate_output(text, max_lines=100, max_bytes=20, output_dir=tmp_path)
    # 20 bytes hold "line 0\nline 1\nline 2" exactly; the other 49 of 69 bytes are cut
    assert tail.truncated and tail.content.startswith("line 0\nline 1\nline 2\n\n...49 bytes truncated...")
    back = truncate_output(text, max_lines=2, max_bytes=1000, output_dir=tmp_path, direction="tail")
    assert back.content.startswith("...8 lines truncated...") and back.content.endswith("line 8\nline 9")


def test_registry_truncates_big_outputs_to_a_file(tmp_path):
    ctx, _ = make_ctx(tmp_path, max_lines=5)
    for i in range(12):
        (ctx.directory / f"f{i:02}.txt").write_text("")
    res = call(ctx, "glob", {"pattern": "*.txt"})
    saved = Path(res.metadata["outputPath"])
    assert res.metadata["truncated"] is True and saved.parent == ctx.output_dir
    assert len(saved.read_text().splitlines()) == 12
    assert res.output.count(".txt\n") == 5 and "...7 lines truncated..." in res.output


def test_todos_round_trip(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    todos = [
        {"content": "write tests", "status": "in_progress", "priority": "high", "id": "t1"},
        {"content": "ship", "status": "pending", "priority": "low"},
        {"content": "plan", "status": "completed", "priority": "medium", "id": "t0"},
    ]
    res = call(ctx, "todowrite", {"todos": todos})
    assert res.title == "2 todos"
    stored = ctx.todos.get()
    assert [t["id"] for t in stored] == ["t1", "2", "t0"]
    read = call(ctx, "todoread", {})
    assert json.loads(read.output) == stored


def _skill(root: Path, folder: str, header: str, body: str = "Do the thing.") -> Path:
    d = root / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\n{header}\n---\n\n{body}\n")
    return d


def test_skills_listed_in_description_and_loaded(tmp_path):
    project, global_dir = tmp_path / "proj-skills", tmp_path / "global-skills"
    d = _skill(project, "release", 'name: release\ndescription: "Cut a release: tag, changelog"', "Step 1.")
    (d / "scripts").mkdir()
    (d / "scripts" / "tag.sh").write_text("git tag")
    _skill(global_dir, "release-global", "name: release\ndescription: shadowed by the project one")
    _skill(global_dir, "review", "name: review\ndescription: >\n  Review a diff\n  carefully")

    skills = available_skills([project, global_dir])
    assert [(s.name, s.description) for s in skills] == [
        ("release", "Cut a release: tag, changelog"),
        ("review", "Review a diff carefully"),
    ]
    tool = get_tool("skill", [project, global_dir])
    assert "<name>release</name>" in tool.description and "Review a diff carefully" in tool.description

    ctx, _ = make_ctx(tmp_path, skill_dirs=[project, global_dir])
    res = call(ctx, "skill", {"name": "release"})
    assert res.output.startswith('<skill_content name="release">\n# Skill: release\n\nStep 1.\n')
    assert f"Base directory for this skill: {d}" in res.output
    assert f"<file>{d / 'scripts' / 'tag.sh'}</file>" in res.output
    with pytest.raises(ToolError, match='Skill "nope" not found. Available skills: release, review'):
        call(ctx, "skill", {"name": "nope"})
