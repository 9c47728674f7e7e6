"""A cancelled turn that will not wind down (a hook or tool ignoring the abort) is given up after its
grace, with one line saying so on the way; the end to end case (a second Ctrl-C) is in
test_e2e_lease_exit.py."""

from __future__ import annotations

import threading

from agentcli.cli.worker import STILL_WINDING_DOWN, Turn


def test_a_turn_ignoring_its_abort_is_given_up_after_the_grace_and_the_user_is_told() -> None:
    release = threading.Event()
    told: list[str] = []
    turn = Turn(grace=1.5, tell=told.append)
    seen_abort = threading.Event()

    def stubborn(abort: threading.Event) -> str:
        abort.wait()
        seen_abort.set()
        release.wait(60)  # ignores the abort until the test ends
        return "too late"

    try:
        escapes = iter([True])  # Esc once, as Ctrl-C
        result = turn.run(stubborn, escape=lambda: next(escapes, False))
    finally:
        release.set()
    assert result is None and turn.cancelled and seen_abort.is_set()
    assert told == [STILL_WINDING_DOWN]


def test_a_turn_that_winds_down_in_time_keeps_its_result_and_says_nothing() -> None:
    told: list[str] = []
    turn = Turn(tell=told.append)
    escapes = iter([True])
    result = turn.run(
        lambda abort: "wound down" if abort.wait(60) else "never", escape=lambda: next(escapes, False)
    )
    assert result == "wound down" and turn.cancelled and told == []
