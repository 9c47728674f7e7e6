"""When background summaries are asked for and which one is swapped in (``compaction/pace.py``,
``compaction/background.py``): a summarizer slower than the window's refill after a swap gets the next
summary asked for while one is still being written; at a due point the newest one ready is swapped in
and the ones still in flight are rebased on it; a new session starts from the latency its model showed
in the recent sessions. The replay of a whole session with 30, 60 and 120 s summarizers is
``scripts/bench_compaction_pause.py``."""

from __future__ import annotations

import threading
from pathlib import Path

from agentcli.session.compaction.background import Background, Job
from agentcli.session.compaction.pace import Pace, remembered
from agentcli.session.compaction.swap import Ready
from agentcli.store import ids
from agentcli.store.records import CompactionDiagnostics, CompactionPart, UserMessage
from agentcli.store.store import Store

USABLE = 28_000


def test_with_no_latency_known_the_first_summary_is_asked_for_at_the_ceiling_and_no_second_one() -> None:
    pace = Pace(rate=100.0)
    assert not pace.start(19_000, USABLE, 0.7)  # a guess would cost sessions that never compact
    assert pace.start(20_000, USABLE, 0.7)  # past 70 %
    assert not pace.start(27_000, USABLE, 0.7, ahead=10_000)  # one in flight: only a known latency asks


def test_a_second_summary_is_asked_for_the_due_point_after_the_first_ones_swap() -> None:
    # 120 s to write a summary, the window growing 100 tokens a second: 12,000 tokens (14,400 with
    # the margin) — more than a swap leaves room for, so the next one is asked for while the first is
    # still being written, once the due point after the first one's swap (which frees ``ahead``) is
    # that close.
    pace = Pace(summary_s=120.0, rate=100.0)
    assert pace.start(14_000, USABLE, 0.7)  # nothing in flight: due in 140 s
    assert not pace.start(18_000, USABLE, 0.7, ahead=10_000)  # due after the swap in 200 s
    assert pace.start(24_000, USABLE, 0.7, ahead=10_000)  # in 140 s
    assert not pace.start(USABLE, USABLE, 0.7, ahead=10_000)  # due now: the loop's to make


def test_never_before_the_floor_nor_once_due() -> None:
    pace = Pace(summary_s=600.0, rate=100.0)
    assert not pace.start(10_000, USABLE, 0.7)  # under 40 % of the usable window
    assert pace.start(12_000, USABLE, 0.7)
    assert not pace.start(0, 0, 0.7)  # the window is not known


def test_the_tokens_a_turn_adds_while_a_summary_is_written_are_what_the_cut_leaves_room_for() -> None:
    assert Pace().growth() == 0  # nothing learned: the tail is the configured one
    assert Pace(summary_s=120.0, rate=100.0).growth() == 12_000


def _job(session_id: str, head: tuple[str, ...], *, ready: bool, head_tokens: int = 1_000) -> Job:
    job = Job(session_id, f"cut-{len(head)}", head, 0, head_tokens)
    if ready:
        job.ready = Ready(parts=[], tail_start_id=job.tail_start_id, head_ids=head)
        job.seconds = 30.0
        job.done.set()
    return job


def test_the_newest_summary_ready_is_swapped_in_the_older_ones_superseded_the_newer_ones_kept() -> None:
    bg = Background()
    older = _job("s", ("a", "b"), ready=True)
    newest_ready = _job("s", ("a", "b", "c", "d"), ready=True, head_tokens=4_000)
    writing = _job("s", ("a", "b", "c", "d", "e", "f"), ready=False, head_tokens=6_000)
    bg.jobs["s"] = [older, newest_ready, writing]
    taken = bg.wait("s", threading.Event())
    assert taken is newest_ready and taken.ready is not None
    assert older.abort.is_set() is False  # done already: nothing to cancel, only dropped
    assert bg.in_flight("s") == [writing]
    assert bg.pace("s").summary_s == 30.0  # its latency paces the next ones
    bg.swapped("s", taken)
    # The one still being written now replaces only what follows the swapped summary's part.
    assert writing.head_ids == ("e", "f") and writing.head_tokens == 2_000 and not writing.abort.is_set()


def test_a_summary_in_flight_that_does_not_cover_the_swapped_one_is_cancelled() -> None:
    bg = Background()
    taken = _job("s", ("a", "b", "c"), ready=True)
    shorter = _job("s", ("a", "b"), ready=False)  # covers no more than what was swapped in
    elsewhere = _job("s", ("x", "y", "z", "w"), ready=False)  # another history (an undo since)
    bg.jobs["s"] = [shorter, elsewhere]
    bg.swapped("s", taken)
    assert bg.in_flight("s") == [] and shorter.abort.is_set() and elsewhere.abort.is_set()


def test_with_none_ready_the_oldest_is_waited_for_and_an_abort_stops_the_wait() -> None:
    bg = Background()
    first = _job("s", ("a",), ready=False)
    second = _job("s", ("a", "b"), ready=False)
    bg.jobs["s"] = [first, second]
    threading.Timer(
        0.1, lambda: (setattr(first, "ready", Ready([], first.tail_start_id, ("a",))), first.done.set())
    ).start()
    assert bg.wait("s", threading.Event()) is first
    assert bg.in_flight("s") == [second]
    abort = threading.Event()
    abort.set()
    assert bg.wait("s", abort) is None and bg.in_flight("s") == [second]  # left to be cancelled


def _compaction(store: Store, session_id: str, made: CompactionDiagnostics) -> None:
    marker = UserMessage(id=ids.ascending("msg"), session_id=session_id)
    store.put_message(marker)
    store.put_part(
        CompactionPart(id=ids.ascending("prt"), session_id=session_id, message_id=marker.id, diagnostics=made)
    )


def test_a_new_session_starts_from_the_summary_latency_its_model_showed_in_the_recent_sessions(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "agentcli.db")
    try:
        assert remembered(store, "fake/m") is None  # a model never seen
        earlier = store.create_session(str(tmp_path), model="fake/m").id
        _compaction(store, earlier, CompactionDiagnostics(summary_ms=90_000, summarizer="fake/m"))
        _compaction(store, earlier, CompactionDiagnostics(summary_ms=1, summarizer="fake/m", fallback=True))
        other = store.create_session(str(tmp_path), model="other/x").id
        _compaction(store, other, CompactionDiagnostics(summary_ms=5_000, summarizer="other/x"))
        assert remembered(store, "fake/m") == 90.0  # the newest real summary (a fallback wrote none)
        assert remembered(store, "other/x") == 5.0
        assert remembered(store, "never/seen") is None
    finally:
        store.close()
