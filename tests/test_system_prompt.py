"""The system prompt: instruction files found walking up to the git root (and not above), CLAUDE.md
only without AGENTS.md, global files, `instructions` globs, and the environment block."""

from __future__ import annotations

import datetime as dt
import platform
from pathlib import Path

import pytest

from agentcli.session.request import system
from tests.builders import Harness
from tests.fakellm import FakeLLM


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # never read the developer's ~/.claude/CLAUDE.md
    monkeypatch.delenv("OPENCODE_DISABLE_CLAUDE_CODE", raising=False)
    return home


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "outer" / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def files(
    directory: Path,
    *,
    extra: list[str] | None = None,
    global_dirs: list[Path] | None = None,
    env: dict[str, str] | None = None,
) -> list[Path]:
    return system.instruction_files(directory, extra or [], global_dirs or [], env=env)


def test_agents_md_walks_up_to_the_git_root_and_not_above(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "pkg" / "src"
    cwd.mkdir(parents=True)
    (tmp_path / "outer" / "AGENTS.md").write_text("above the repo")
    (root / "AGENTS.md").write_text("root rules")
    (root / "pkg" / "AGENTS.md").write_text("package rules")
    assert files(cwd) == [root / "AGENTS.md", root / "pkg" / "AGENTS.md"]  # outermost first
    blocks = system.build(cwd, "fake/test-model")
    assert "root rules" in blocks[1] and "package rules" in blocks[1]
    assert "above the repo" not in "\n".join(blocks)


def test_claude_md_only_without_agents_md(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "CLAUDE.md").write_text("claude rules")
    assert files(root) == [root / "CLAUDE.md"]
    (root / "AGENTS.md").write_text("agents rules")
    assert files(root) == [root / "AGENTS.md"]


def test_no_instruction_files_gives_one_block(tmp_path: Path) -> None:
    root = repo(tmp_path)
    blocks = system.build(root, "fake/test-model")
    assert len(blocks) == 1 and "<env>" in blocks[0]


def test_global_files(tmp_path: Path, private_home: Path) -> None:
    root = repo(tmp_path)
    gdir = tmp_path / "global"
    gdir.mkdir()
    (gdir / "AGENTS.md").write_text("global rules")
    (gdir / "CLAUDE.md").write_text("global claude")  # AGENTS.md wins in the global dir too
    (private_home / ".claude").mkdir()
    (private_home / ".claude" / "CLAUDE.md").write_text("claude code rules")
    env = {"HOME": str(private_home)}
    assert files(root, global_dirs=[gdir], env=env) == [
        gdir / "AGENTS.md",
        private_home / ".claude" / "CLAUDE.md",
    ]
    env["OPENCODE_DISABLE_CLAUDE_CODE"] = "1"
    assert files(root, global_dirs=[gdir], env=env) == [gdir / "AGENTS.md"]


def test_instructions_globs_relative_to_the_root_and_absolute(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "sub"
    cwd.mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "b.md").write_text("b")
    (root / "docs" / "a.md").write_text("a")
    (root / "docs" / "skip.txt").write_text("no")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x")
    got = files(cwd, extra=["docs/*.md", str(outside), "missing/*.md"])
    assert got == [root / "docs" / "a.md", root / "docs" / "b.md", outside]
    # The same file named twice is read once.
    assert files(cwd, extra=["docs/a.md", "docs/*.md"]) == [root / "docs" / "a.md", root / "docs" / "b.md"]


def test_environment_block_facts(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "sub"
    cwd.mkdir()
    env = system.environment(cwd, "fake/test-model")
    assert "fake/test-model" in env
    assert f"Working directory: {cwd}" in env
    assert f"Workspace root folder: {root}" in env
    assert "Is directory a git repo: yes" in env
    assert f"Platform: {platform.system().lower()}" in env
    assert dt.date.today().strftime("%a %b %d %Y") in env
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "Is directory a git repo: no" in system.environment(plain, "m")


def test_the_loop_sends_project_instructions_and_config_globs(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, extra={"instructions": ["rules/*.md"]})
    (h.project / "AGENTS.md").write_text("always run the tests")
    (h.project / "rules").mkdir()
    (h.project / "rules" / "style.md").write_text("use tabs")
    blocks = h.runtime.system_prompt(h.sid)
    assert len(blocks) == 2
    assert "always run the tests" in blocks[1] and "use tabs" in blocks[1]
    assert blocks[1].index("always run the tests") < blocks[1].index("use tabs")
    assert f"Working directory: {h.project}" in blocks[0]
