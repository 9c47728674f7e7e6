"""scripts/eval_compaction.py with the scripted model: the probe evaluation runs end to end, and its
scores show what the carryover keeps (useless summaries, a perfect reader of the context)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "eval_compaction.py"


def test_the_probe_evaluation_scores_every_probe_from_the_records() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "AGENTCLI"))}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--compactions", "3", "--compare"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert proc.returncode == 0, proc.stderr
    figures = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert figures["model"] == "scripted" and figures["compactions"] == "3"
    for probe in ("files_changed", "failures", "user_requests", "next_steps", "overall"):
        assert float(figures[f"score_{probe}"]) == 1.0, probe  # all of it survived three useless summaries
    assert float(figures["score_overall_without_carryover"]) < 0.5  # OpenCode's way: the summary was all
