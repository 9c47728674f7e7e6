"""OpenCode's ``formatter``: after a successful edit/write inside the project, the formatters for
the file's extension run (custom ones from the config, built-ins whose program is on PATH) and the
model is told which one changed the file; ``"formatter": false`` turns them all off."""

from __future__ import annotations

import json
import os
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
    workspace.write_config({"formatter": True})
    (workspace.project / "ruff.toml").write_text("")
    _write(workspace, fake_llm, "mod.py", "x=1\n")
    assert (workspace.project / "mod.py").read_text() == "x = 1\n"
    assert "The file was formatted by ruff" in _tool_result(fake_llm)


def test_without_a_ruff_config_python_is_left_as_written(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    if (ruff := shutil.which("ruff")) is None:
        pytest.skip("ruff is not on PATH (the test extras install it)")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ruff").symlink_to(ruff)
    workspace.extra_env["PATH"] = str(tmp_path / "bin")  # ruff only: no uv to take its place
    workspace.write_config({"formatter": True})  # OpenCode runs ruff only for a project that uses it
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


# --- OpenCode's npm, composer, R and uv formatters -------------------------------------------------

CACHE = Path(__file__).parent.parent / ".ci" / "cache"  # where .ci/run installs third-party programs
NPM_DIR = Path(os.environ.get("AGENTCLI_TEST_NPM_DIR", CACHE / "npm"))


def _npm_prettier() -> Path:
    modules = NPM_DIR / "node_modules"
    if shutil.which("node") is None:
        pytest.skip("node is not installed: prettier cannot run")
    if not (modules / ".bin" / "prettier").exists():
        pytest.skip(f"prettier is not installed (.ci/run: npm install in {NPM_DIR})")
    return modules


def _prettier_project(workspace: Workspace) -> None:
    (workspace.project / "package.json").write_text(json.dumps({"devDependencies": {"prettier": "^3"}}))
    (workspace.project / "node_modules").symlink_to(_npm_prettier(), target_is_directory=True)


def test_formatters_run_only_when_the_config_turns_them_on(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _prettier_project(workspace)  # OpenCode 1.18.33: `formatter` omitted, none runs
    _write(workspace, fake_llm, "app.js", "const x = {a:1}")
    assert (workspace.project / "app.js").read_text() == "const x = {a:1}"


def test_prettier_from_the_projects_node_modules_formats_javascript(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"formatter": True})
    _prettier_project(workspace)  # the harness trusts the folder outright (AGENTCLI_TRUST_ALL)
    _write(workspace, fake_llm, "app.js", "const x = {a:1}")
    assert (workspace.project / "app.js").read_text() == "const x = { a: 1 };\n"
    assert "The file was formatted by prettier" in _tool_result(fake_llm)


def test_prettier_waits_for_the_user_to_trust_the_folder(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _prettier_project(workspace)  # its node_modules and JavaScript config are the project's own code
    provider = workspace.write_config({"formatter": True})
    global_dir = workspace.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps(provider))
    (workspace.project / "opencode.json").unlink()
    workspace.extra_env["AGENTCLI_TRUST_ALL"] = ""
    _write(workspace, fake_llm, "app.js", "const x = {a:1}")
    assert (workspace.project / "app.js").read_text() == "const x = {a:1}"
    assert workspace.run("trust").returncode == 0  # nothing risky in its config: trusted outright
    _write(workspace, fake_llm, "next.js", "const y = {b:2}")
    assert (workspace.project / "next.js").read_text() == "const y = { b: 2 };\n"


def test_a_formatters_environment_reaches_its_process(workspace: Workspace, fake_llm: FakeLLM) -> None:
    stamp = [
        sys.executable,
        "-c",
        "import os, sys; open(sys.argv[1], 'a').write(os.environ['STAMP'] + os.environ.get('KEEP', ''))",
        "$FILE",
    ]
    entry = {"command": stamp, "extensions": [".txt"], "environment": {"STAMP": "stamped"}}
    workspace.extra_env["KEEP"] = "+kept"  # the environment is added to agentcli's own
    workspace.write_config({"formatter": {"stamp": entry}})
    _write(workspace, fake_llm, "notes.txt", "hello ")
    assert (workspace.project / "notes.txt").read_text() == "hello stamped+kept"


def _program(folder: Path, name: str, output: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\n")
    path.chmod(0o755)
    return path


def _detected(project: Path, name: str, *, trusted: bool = True, config: dict | None = None) -> list:
    from agentcli.config.model import FormatterConfig
    from agentcli.config.paths import truthy
    from agentcli.tools.formatters import Formatters, oxfmt_flag

    entries = {k: FormatterConfig(**v) for k, v in (config or {}).items()}
    oxfmt = oxfmt_flag(os.environ, truthy)
    return Formatters.from_config(entries, trusted=trusted, oxfmt=oxfmt).commands(project / name, project)


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only a folder of this test's programs: no formatter installed system-wide blurs a rule."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_biome_runs_where_a_biome_config_is_found(tmp_path: Path, bare_path: Path) -> None:
    project = tmp_path / "p"
    biome = _program(project / "node_modules" / ".bin", "biome")
    (project / "src").mkdir(parents=True)
    assert _detected(project, "src/a.ts") == []  # no biome.json
    (project / "biome.jsonc").write_text("{}")
    assert _detected(project, "src/a.ts") == [
        ("biome", [str(biome), "format", "--write", f"{project}/src/a.ts"])
    ]
    assert _detected(project, "src/a.ts", trusted=False) == []  # the project's own program
    assert _detected(project, "src/a.py") == []


def test_pint_runs_for_a_laravel_pint_project(tmp_path: Path, bare_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "composer.json").write_text(json.dumps({"require": {"php": "^8"}}))
    assert _detected(project, "a.php") == []
    (project / "composer.json").write_text(json.dumps({"require-dev": {"laravel/pint": "^1"}}))
    assert _detected(project, "a.php") == [("pint", ["./vendor/bin/pint", f"{project}/a.php"])]
    assert _detected(project, "a.php", trusted=False) == []


def test_prettier_needs_the_dependency_and_oxfmt_the_experimental_flag(
    tmp_path: Path, bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "p"
    prettier = _program(bare_path, "prettier")
    oxfmt = _program(project / "node_modules" / ".bin", "oxfmt")
    (project / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "1"}}))
    assert _detected(project, "a.ts") == []
    deps = {"prettier": "3", "oxfmt": "0.1"}
    (project / "package.json").write_text(json.dumps({"devDependencies": deps}))
    assert _detected(project, "a.ts") == [("prettier", [str(prettier), "--write", f"{project}/a.ts"])]
    monkeypatch.setenv("OPENCODE_EXPERIMENTAL", "1")
    assert [name for name, _ in _detected(project, "a.ts")] == ["prettier", "oxfmt"]
    assert _detected(project, "a.md") == [("prettier", [str(prettier), "--write", f"{project}/a.md"])]
    monkeypatch.setenv("OPENCODE_EXPERIMENTAL_OXFMT", "0")  # its own flag wins
    assert [name for name, _ in _detected(project, "a.ts")] == ["prettier"]
    assert oxfmt.exists()


def test_air_is_the_r_formatter_only_when_its_help_says_so(tmp_path: Path, bare_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    _program(bare_path, "air", "air - Live reload for Go apps")
    from agentcli.tools import formatters

    formatters._probe.cache_clear()
    assert _detected(project, "a.R") == []
    air = _program(bare_path, "air", "Air: An R language server and formatter")
    formatters._probe.cache_clear()
    assert _detected(project, "a.R") == [("air", [str(air), "format", f"{project}/a.R"])]


def test_a_built_ins_entry_adds_environment_and_keeps_its_detection(tmp_path: Path, bare_path: Path) -> None:
    from agentcli.config.model import FormatterConfig
    from agentcli.tools.formatters import Formatters

    project = tmp_path / "p"
    _program(bare_path, "prettier")
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"devDependencies": {"prettier": "3"}}))
    config = {"prettier": FormatterConfig(environment={"NODE_ENV": "ci"})}
    [run] = Formatters.from_config(config, trusted=True).runs(project / "a.js", project)
    assert run.environment == {"BUN_BE_BUN": "1", "NODE_ENV": "ci"}


def test_uv_formats_python_where_ruff_is_not_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uv = Path(os.environ.get("AGENTCLI_TEST_UV", CACHE / "uv" / "bin" / "uv"))
    if not uv.exists():
        pytest.skip(f"uv is not installed (.ci/run installs it from PyPI into {uv.parent.parent})")
    ruff = shutil.which("ruff")  # the test extras' ruff, for the rule that ruff wins where configured
    monkeypatch.setenv("PATH", ":".join([str(uv.parent), *([str(Path(ruff).parent)] if ruff else [])]))
    project = tmp_path / "p"
    project.mkdir()
    assert _detected(project, "a.py") == [("uv", [str(uv), "format", "--", f"{project}/a.py"])]
    assert _detected(project, "a.py", config={"ruff": {"disabled": True}}) == []  # one backend, both off
    if shutil.which("ruff") is not None:
        (project / "ruff.toml").write_text("")
        assert [name for name, _ in _detected(project, "a.py")] == ["ruff"]  # ruff itself, not uv


def test_a_projects_formatter_environment_waits_for_trust(tmp_path: Path) -> None:
    from agentcli import trust

    data = {"formatter": {"prettier": {"environment": {"NODE_OPTIONS": "--require ./x.js"}}}}
    risks = trust.scan(data, source=tmp_path / "opencode.json", root=tmp_path, home=tmp_path / "home")
    assert [r.key for r in risks] == ["formatter.prettier.environment"]
