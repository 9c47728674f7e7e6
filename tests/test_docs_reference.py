"""The reference pages in docs/reference/ say what the code says: every command's --help, the
environment variables, the plugin hooks (written by scripts/gen_docs.py)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from agentcli.config.environment import VARIABLES

ROOT = Path(__file__).resolve().parents[1]
OURS = re.compile(r"^(AGENTCLI|OPENCODE)_[A-Z0-9_]+$")
REGISTRY = ROOT / "agentcli" / "config" / "environment.py"


def _spelled_in_code() -> set[str]:
    """Every string constant in agentcli/ (outside the registry) that could name an environment variable."""
    found: set[str] = set()
    for path in (ROOT / "agentcli").rglob("*.py"):
        if path == REGISTRY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"[A-Z][A-Z0-9_]+", node.value)
            ):
                found.add(node.value)
    return found


def test_the_reference_pages_match_the_code_whatever_the_terminal_width() -> None:
    env = {**os.environ, "COLUMNS": "40"}
    proc = subprocess.run(
        [sys.executable, "scripts/gen_docs.py", "--check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_every_agentcli_or_opencode_variable_the_code_reads_is_in_the_registry() -> None:
    listed = {var.name for var in VARIABLES}
    unlisted = {name for name in _spelled_in_code() if OURS.match(name)} - listed
    assert not unlisted, f"add these to agentcli/config/environment.py: {sorted(unlisted)}"


def test_every_listed_variable_is_read_somewhere() -> None:
    stale = {var.name for var in VARIABLES} - _spelled_in_code()
    assert not stale, f"no code reads these any more: {sorted(stale)}"


def test_a_variable_is_listed_once() -> None:
    names = [var.name for var in VARIABLES]
    assert len(names) == len(set(names))


def test_every_relative_link_in_the_readme_and_docs_leads_to_a_file() -> None:
    link = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target, _anchor in link.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
