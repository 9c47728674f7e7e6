"""``scripts/bench_all.py`` runs every script under scripts/ that measures something, so the figures
the docs quote are all produced by one command (docs/performance.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# Scripts that measure nothing: they write fixtures or long runs with their own reports. Corpus builders
# and splitters (redact_*) and rule refreshers (refresh_*) are known by their names.
NOT_FIGURES = {
    "bench_all",
    "fuzz_history",  # a long run (docs/testing.md): hours, reported on its own
}
BUILDERS = ("redact_", "refresh_")


def _bench_all() -> object:
    spec = importlib.util.spec_from_file_location("bench_all", SCRIPTS / "bench_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_all"] = module
    spec.loader.exec_module(module)
    return module


def test_every_script_that_measures_something_is_run_by_bench_all() -> None:
    listed = {s.name for s in _bench_all().SCRIPTS}  # type: ignore[attr-defined]
    present = {p.stem for p in SCRIPTS.glob("*.py") if not p.stem.startswith(BUILDERS)}
    assert present - NOT_FIGURES - listed == set()
    assert listed <= present  # nothing listed that is gone


def test_a_corpus_count_meets_all_or_none() -> None:
    module = _bench_all()
    target = module.Target  # type: ignore[attr-defined]
    verdict = module.verdict  # type: ignore[attr-defined]
    assert verdict(target("x", "all", "all"), "57/57 (target: all)")
    assert not verdict(target("x", "all", "all"), "107/109 (target: all)")
    assert verdict(target("x", "none", "none"), "0/50 (target: 0)")
    assert not verdict(target("x", "none", "none"), "1/45 (target: 0)")
