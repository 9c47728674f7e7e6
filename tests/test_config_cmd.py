"""`agentcli config …` run as a user would: a subprocess with its own HOME and working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The config sub-app as a program; it also records which heavy modules got imported.
RUNNER = """
import atexit, os, sys
def _report():
    heavy = sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'sqlmodel', 'sqlalchemy'})
    with open(os.environ['HEAVY_REPORT'], 'w') as f:
        f.write(','.join(heavy))
atexit.register(_report)
from agentcli.cli.config_cmd import app
app(prog_name='agentcli config')
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    return path


def run(home: Path, cwd: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_", "AGENTCLI_", "XDG_"))}
    env |= {"HOME": str(home), "HEAVY_REPORT": str(home / "heavy.txt"), **extra_env}
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert (home / "heavy.txt").read_text() == "", "the config command imported litellm or sqlmodel"
    return result


def test_set_get_list_round_trip(home: Path, proj: Path) -> None:
    result = run(home, proj, "set", "compaction.reserved", "30000")
    user_toml = home / ".config/agentcli/config.toml"
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"set compaction.reserved = 30000 in {user_toml}"
    assert "reserved = 30000" in user_toml.read_text()

    assert run(home, proj, "get", "compaction.reserved").stdout == "30000\n"
    assert run(home, proj, "get", "compaction.reserved", "--user").stdout == "30000\n"
    assert run(home, proj, "get", "compaction.prune").stdout == "true\n"  # a default

    rows = json.loads(run(home, proj, "list", "--json").stdout)
    assert rows["compaction.reserved"] == {"value": 30000, "source": "~/.config/agentcli/config.toml"}
    assert rows["compaction.auto"] == {"value": True, "source": "default"}

    text = run(home, proj, "list").stdout.splitlines()
    assert "compaction.reserved = 30000  # ~/.config/agentcli/config.toml" in text


def test_set_warns_when_a_project_file_overrides(home: Path, proj: Path) -> None:
    (proj / "opencode.json").write_text('{"model": "proj/m"}')
    result = run(home, proj, "set", "model", "user/m")
    assert result.returncode == 0
    assert result.stderr.strip() == "note: opencode.json sets model too and takes precedence here"
    assert run(home, proj, "get", "model").stdout == "proj/m\n"
    assert run(home, proj, "get", "model", "--user").stdout == "user/m\n"


def test_get_of_a_table_prints_an_object(home: Path, proj: Path) -> None:
    out = run(home, proj, "get", "tool_output").stdout
    assert json.loads(out) == {"max_bytes": 51200, "max_lines": 2000}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set", "compaction.reserved", "-5"), "{toml}: compaction.reserved: must be a non-negative integer"),
        (("set", "compaction.nope", "1"), "compaction.nope: unknown key (agentcli does not read it)"),
        (("get", "compaction.reserved"), "compaction.reserved: not set"),
        (("get", "model", "--user"), "model: not set in the user config"),
        (("unset", "model"), "model: not set in the user config"),
    ],
)
def test_errors_are_one_line_with_exit_2(home: Path, proj: Path, args: tuple[str, ...], message: str) -> None:
    result = run(home, proj, *args)
    assert result.returncode == 2
    toml = home / ".config/agentcli/config.toml"
    assert result.stderr == "error: " + message.format(toml=toml) + "\n"
    assert not toml.exists()


def test_broken_project_file_is_reported_not_a_traceback(home: Path, proj: Path) -> None:
    (proj / "opencode.json").write_text('{"compaction": {"auto": maybe}}')
    result = run(home, proj, "list")
    assert result.returncode == 2
    assert result.stderr == "error: opencode.json:1:25: invalid JSON: Expecting value\n"


def test_warnings_go_to_stderr(home: Path, proj: Path) -> None:
    (proj / "opencode.json").write_text('{"modle": "x"}')
    result = run(home, proj, "list")
    assert result.returncode == 0
    assert result.stderr == "warning: opencode.json: unknown key 'modle' (did you mean model?)\n"


def test_path_lists_candidates_marking_existing(home: Path, proj: Path) -> None:
    (proj / "opencode.json").write_text("{}")
    lines = run(home, proj, "path").stdout.splitlines()
    assert lines[0] == f"  {home}/.config/opencode/opencode.json"
    assert f"  {home}/.config/agentcli/config.toml" in lines
    assert f"* {proj.resolve()}/opencode.json" in lines
    assert f"  {proj.resolve()}/.opencode/opencode.json" in lines


def test_unset_removes_the_value(home: Path, proj: Path) -> None:
    run(home, proj, "set", "compaction.auto", "false")
    assert run(home, proj, "get", "compaction.auto").stdout == "false\n"
    assert run(home, proj, "unset", "compaction.auto").returncode == 0
    assert run(home, proj, "get", "compaction.auto").stdout == "true\n"
