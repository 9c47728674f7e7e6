"""The long run of the history fuzz (tests/test_history_fuzz.py): N random sequences of turns, prunes,
compactions, undo/redo, Ctrl-C, crashes, MCP deaths and parallel tasks on agentcli's real session loop,
every request checked against the providers' rules (tests/provider_rules.py).

    python scripts/fuzz_history.py [-n 10000] [--steps 10] [--minutes 25] [--batch 100]

Runs in batches of random seeds until N sequences or the time is up; prints the sequences run, the
requests checked and the rate, and for an invalid request (or a crash) the shrunk sequence that makes
it, as Hypothesis prints it, with the blob that replays it (@reproduce_failure). Target: 0 invalid.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.test_history_fuzz import HistoryMachine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="sequences to run (default 10,000)")
    parser.add_argument("--steps", type=int, default=10, help="rules per sequence at most (default 10)")
    parser.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    parser.add_argument("--batch", type=int, default=100, help="sequences per random seed")
    args = parser.parse_args(argv)
    start, cpu0 = time.monotonic(), time.process_time()
    found = 0
    while HistoryMachine.sequences < args.n:
        if args.minutes and time.monotonic() - start > args.minutes * 60:
            print("time is up")
            break
        batch = settings(
            max_examples=min(args.batch, args.n - HistoryMachine.sequences),
            stateful_step_count=args.steps,
            derandomize=False,
            database=None,
            deadline=None,
            print_blob=True,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )
        try:
            run_state_machine_as_test(HistoryMachine, settings=batch)
        except Exception:  # noqa: BLE001 - an invalid request or a crash: print it, shrunk, and go on
            found += 1
            print("".join(traceback.format_exc(limit=3)), flush=True)
        _progress(start, cpu0, found)
    _progress(start, cpu0, found, final=True)
    seen = ", ".join(f"{name} {n:,}" for name, n in sorted(HistoryMachine.events.items()))
    print(f"what the sequences went through (bus events): {seen}")
    return 1 if found else 0


def _progress(start: float, cpu0: float, found: int, final: bool = False) -> None:
    wall, cpu = time.monotonic() - start, time.process_time() - cpu0
    n, requests = HistoryMachine.sequences, HistoryMachine.requests
    rate = n / wall if wall else 0.0
    label = "total" if final else "so far"
    print(
        f"{label}: {n:,} sequences (shrinking included), {requests:,} requests checked, "
        f"{found} invalid found; {wall:.0f} s wall, {cpu:.0f} s CPU, {rate:.1f} sequences/s",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
