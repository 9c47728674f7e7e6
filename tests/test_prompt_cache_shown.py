"""Prompt caching shown: the gauge and `/context` say how much of the last request the provider's cache
served, and `sessions show` sums what caching saved in money (from litellm's bundled prices, without
importing litellm)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentcli.cli.render import TurnNotes, gauge_for
from agentcli.llm.limits import cache_saved
from agentcli.ui.fmt import format_cost
from agentcli.ui.gauge import GaugeData, gauge_text
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply, Usage
from tests.workspace import Workspace

MODEL = "anthropic/claude-sonnet-4-5"


def _claude(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """Claude on the lean path (the default choice, even when the suite runs forced), at the server."""
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"
    workspace.write_config(
        {
            "model": MODEL,
            "provider": {
                "anthropic": {
                    "options": {"baseURL": fake_llm.base_url, "apiKey": "sk-ant-test"},
                    "models": {"claude-sonnet-4-5": {"limit": {"context": 200_000, "output": 8_000}}},
                }
            },
        }
    )


def test_the_gauge_says_how_much_of_the_last_request_was_cached() -> None:
    data = GaugeData(
        used=50_000, context_limit=200_000, usable=180_000, cache_read=46_000, request_input=50_000
    )
    assert "92% cached" in gauge_text(data).plain
    assert "cached" not in gauge_text(GaugeData(used=50_000, context_limit=200_000, usable=180_000)).plain


def test_the_gauge_after_a_turn_reads_the_last_steps_cache_figures(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, context=200_000, output=8_000)
    fake_llm.push(Reply(text="first", usage=Usage(20_000, 10, cache_write_tokens=19_000)))
    h.loop.prompt(h.sid, "one")
    assert "cached" not in gauge_text(gauge_for(h.runtime, h.sid, TurnNotes()).data).plain  # only written
    fake_llm.push(Reply(text="second", usage=Usage(21_000, 10, cached_tokens=19_000, cache_write_tokens=900)))
    h.loop.prompt(h.sid, "two")
    assert "90% cached" in gauge_text(gauge_for(h.runtime, h.sid, TurnNotes()).data).plain  # 19,000 / 21,000


def test_context_and_sessions_show_report_the_cache(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _claude(workspace, fake_llm)
    fake_llm.push(Reply(text="first answer", usage=Usage(30_000, 50, cache_write_tokens=28_000)))
    assert workspace.run("run", "first question").returncode == 0
    fake_llm.push(
        Reply(text="second answer", usage=Usage(31_000, 50, cached_tokens=28_000, cache_write_tokens=2_500))
    )
    assert workspace.run("run", "--continue", "second question").returncode == 0

    context = workspace.run("context")
    assert context.returncode == 0, context.stderr
    assert (
        "last request 31k input · 90% from the prompt cache (28k read) · 2.5k written to it" in context.stdout
    )

    [session] = workspace.store().list_sessions()
    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    # Reads at a tenth of the input price, writes at 1.25x: 28,000 x $2.70/M - 30,500 x $0.75/M.
    saved = cache_saved(MODEL, 28_000, 28_000 + 2_500)
    assert round(saved, 4) == round(28_000 * 2.7e-6 - 30_500 * 0.75e-6, 4)
    assert f"28k cached / 30.5k cache write (caching saved {format_cost(saved)})" in shown.stdout


def test_sessions_show_prices_the_cache_without_importing_litellm(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _claude(workspace, fake_llm)
    fake_llm.push(Reply(text="answer", usage=Usage(30_000, 50, cached_tokens=20_000)))
    assert workspace.run("run", "a question").returncode == 0
    [session] = workspace.store().list_sessions()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentcli", "sessions", "show", session.id],
        cwd=workspace.project,
        env=workspace.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "20k cached (caching saved $0.05)" in proc.stdout  # 20,000 x $2.70/M
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "import time:" in line}
    assert "litellm" not in imported
