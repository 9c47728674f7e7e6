"""The installed package holds every data file agentcli reads at run time, and no source data it never
reads (kingfisher's rules verbatim, 670 KB, and gitleaks' TOML, 98 KB, are the sources of the JSON the
package reads: they stay in scripts/data/).

The wheel is built as a user's pip builds it (``pip wheel .``, its build backend fetched from the
package registry as pip does); the files a turn opens inside the package are recorded by an audit hook
in the CLI's own process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentcli"

_RECORDING = """
import atexit, json, sys
package, record, opened = sys.argv[1], sys.argv[2], set()
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].startswith(package):
        opened.add(args[0])
sys.addaudithook(hook)
atexit.register(lambda: open(record, "w").write(json.dumps(sorted(opened))))
sys.argv = ["agentcli", *sys.argv[3:]]
from agentcli.cli.process import main
main()
"""


def _checkout_files() -> list[str]:
    """The checkout's own files (tracked or new, not ignored), relative to its root."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split("\0")
    return [name for name in listed if name and (ROOT / name).is_file()]  # (deleted, not committed: listed)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The files of the wheel built from this checkout, relative to the package's root."""
    out, source = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source")
    # From the checkout's own files alone: a build folder or egg-info left in it (an editable install
    # makes one) would feed setuptools the package's old file list.
    for name in _checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and "setuptools" in built.stderr and "Could not" in built.stderr:
        pytest.skip(f"pip could not fetch the build backend from the registry: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    [path] = out.glob("agentcli-*.whl")
    with zipfile.ZipFile(path) as archive:
        return {name for name in archive.namelist() if name.startswith("agentcli/")}


def _data_files(names: set[str]) -> set[str]:
    return {n for n in names if not n.endswith((".py", ".pyc", ".pyi", ".typed"))}


def test_every_data_file_in_the_package_ships_and_no_rule_source_does(wheel: set[str]) -> None:
    in_tree = {name for name in _checkout_files() if name.startswith("agentcli/")}
    assert _data_files(in_tree) == _data_files(wheel)  # package-data names every file the package holds
    assert "agentcli/redact/kingfisher.json" in wheel and "agentcli/redact/kingfisher_LICENSE" in wheel
    assert not any(n.endswith((".yml", ".yaml", ".toml")) for n in wheel)  # the rules verbatim stay out
    assert "agentcli/redact/gitleaks.json" in wheel and "agentcli/redact/gitleaks_LICENSE" in wheel
    assert (ROOT / "scripts" / "data" / "gitleaks.toml").is_file()
    assert (ROOT / "scripts" / "data" / "kingfisher_rules.yml").is_file()
    assert (ROOT / "scripts" / "data" / "kingfisher_LICENSE").is_file()


def test_every_file_a_turn_opens_in_the_package_ships_in_the_wheel(
    wheel: set[str], workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """A turn whose message holds a key (redacted from the title request: both rule sets' digests load)
    on the default path, with the title model's prompt and the agent's."""
    fake_llm.push(Reply(text="Noted."))
    record = tmp_path / "opened.json"
    message = "deploy with weatherbit key 0123456789abcdef0123456789abcdef and ghp_" + "a1B2" * 9
    proc = subprocess.run(
        [sys.executable, "-c", _RECORDING, str(PACKAGE) + "/", str(record), "run", message],
        cwd=workspace.project,
        env=workspace.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    opened = {Path(p).relative_to(ROOT).as_posix() for p in json.loads(record.read_text())}
    data = _data_files(opened)
    assert {"agentcli/redact/gitleaks.json", "agentcli/redact/kingfisher.json"} <= data  # the probe works
    assert any(n.startswith("agentcli/session/prompts/") for n in data)
    assert data <= wheel, f"opened at run time but not in the wheel: {sorted(data - wheel)}"
