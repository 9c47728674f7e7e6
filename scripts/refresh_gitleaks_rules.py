"""Refresh gitleaks' rules (scripts/data/gitleaks.toml), the JSON copy agentcli reads
(agentcli/redact/gitleaks.json) and their licence from a gitleaks checkout.

Usage: python scripts/refresh_gitleaks_rules.py GITLEAKS_GIT_DIR

The argument is a clone of https://github.com/gitleaks/gitleaks (a work tree or a bare git
directory): the rules are read from ``config/gitleaks.toml`` at its HEAD, the commit and its
``git describe`` are written into the file's first line. Then check that every rule still compiles
and the corpus figures hold: ``python -m pytest -q tests/test_redact*.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "agentcli" / "redact"
# The TOML verbatim is the JSON's source, read only by this script and a test: it stays out of the wheel.
SOURCE = Path(__file__).resolve().parent / "data"


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: refresh_gitleaks_rules.py GITLEAKS_GIT_DIR")
    repo = sys.argv[1]
    commit = git(repo, "rev-parse", "HEAD").strip()
    version = git(repo, "describe", "--tags", "--always").strip()
    rules = git(repo, "show", "HEAD:config/gitleaks.toml")
    header = (
        f"# From https://github.com/gitleaks/gitleaks config/gitleaks.toml, {version} (commit {commit}).\n"
        "# MIT licence: see gitleaks_LICENSE. Refreshed by scripts/refresh_gitleaks_rules.py; do not edit.\n"
    )
    (SOURCE / "gitleaks.toml").write_text(header + rules)
    # The same data as JSON: what agentcli reads at start (a TOML parse costs every command 26 ms).
    data = json.dumps(tomllib.loads(rules), separators=(",", ":"), ensure_ascii=False)
    (TARGET / "gitleaks.json").write_text(data + "\n")
    for folder in (TARGET, SOURCE):
        (folder / "gitleaks_LICENSE").write_text(git(repo, "show", "HEAD:LICENSE"))
    sys.path.insert(0, str(TARGET.parents[1]))
    from agentcli.redact import gitleaks  # compiles every rule: a failure names the rule

    print(f"gitleaks rules: {len(gitleaks.RULES)} loaded from {version} ({commit[:12]})")


if __name__ == "__main__":
    main()
