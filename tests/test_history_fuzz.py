"""Never an invalid history (issue 28): a Hypothesis state machine drives agentcli's real session loop
(tests/history_world.py: the real SQLite store, the scripted server speaking each provider's wire)
through random sequences of turns with tool calls (parallel ones too), prunes, compactions (automatic,
manual, self-requested through ``memory_compact``, after the provider's "context too long"), undo and
redo, Ctrl-C during a tool, a crash and a resume in a new "process", an MCP server dying in the middle
of a call and parallel subagent tasks; every request the provider receives is checked against its
rules (tests/provider_rules.py) and nothing the user typed may be lost from the store.

Each rule is one method: a new way of changing the history (a background summary swapped in, say) is
one more ``@rule``. The suite runs a fixed-seed subset (``test_history_never_invalid``);
``scripts/fuzz_history.py`` runs the long form (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agentcli.session import undo
from agentcli.session.compaction import uncompact
from agentcli.session.request.view import estimate_messages
from tests.fakellm import ErrorResponse, FakeLLM
from tests.history_world import PROVIDERS, World

_SERVER: FakeLLM | None = None


def shared_server() -> FakeLLM:
    """One scripted server for every sequence of the process (each sequence adds its own rule)."""
    global _SERVER
    if _SERVER is None:
        _SERVER = FakeLLM().start()
    return _SERVER


# A step's tool calls: (tool, arguments), the real tools on the project's files.
CALLS: dict[str, tuple[str, Any]] = {
    "read_small": ("read", {"filePath": "small.txt"}),
    "read_big1": ("read", {"filePath": "big1.txt"}),
    "read_big2": ("read", {"filePath": "big2.txt"}),
    "write": ("write", {"filePath": "notes.md", "content": "# notes\nwritten by the fuzz\n"}),
    "edit": ("edit", {"filePath": "small.txt", "oldString": "small", "newString": "SMALL"}),
    "missing": ("read", {"filePath": "no-such-file.txt"}),  # a tool error
    "unknown": ("no_such_tool", {"x": 1}),  # a tool the model made up
    "broken": ("read", '{"filePath": "small.txt"'),  # arguments that are not JSON (cut short)
    "task": ("task", {"description": "look", "prompt": "look at small.txt", "subagent_type": "helper"}),
}
step = st.lists(st.sampled_from(sorted(CALLS)), min_size=1, max_size=3)


class HistoryMachine(RuleBasedStateMachine):
    # Totals over every sequence run in this process (scripts/fuzz_history.py prints them).
    sequences = 0
    requests = 0
    events: Counter[str] = Counter()

    def __init__(self) -> None:
        super().__init__()
        shm = Path("/dev/shm")  # a real SQLite file, without waiting for the disk at each commit
        self.tmp = tempfile.TemporaryDirectory(prefix="fuzz-history-", dir=shm if shm.is_dir() else None)
        self.world: World | None = None
        self.turns = 0

    # An MCP server costs a subprocess per sequence: one sequence in four has one.
    @initialize(provider=st.sampled_from(PROVIDERS), mcp=st.sampled_from([False, False, False, True]))
    def start(self, provider: str, mcp: bool) -> None:
        server = shared_server()
        self.world = World(Path(self.tmp.name), server, provider, mcp)

    @property
    def w(self) -> World:
        assert self.world is not None
        return self.world

    def _model(self) -> Any:
        """The scripted model, its plan emptied: a turn that stopped early (a failed compaction, a
        cancelled one) leaves steps it never asked for, which are not this rule's."""
        self.w.model.plan.clear()
        return self.w.model

    def _text(self) -> str:
        self.turns += 1
        return f"user turn {self.turns}: go on"

    # --- turns -----------------------------------------------------------------------------------

    @rule(
        steps=st.lists(step, min_size=0, max_size=3),
        reasoning=st.booleans(),
        redacted=st.booleans(),
        said=st.sampled_from(["step", "", " \n"]),  # what the model writes beside its calls
        answer=st.sampled_from(["done", "", "  "]),
    )
    def turn(self, steps: list[list[str]], reasoning: bool, redacted: bool, said: str, answer: str) -> None:
        """A turn of tool steps (one to three calls each, run side by side), then an answer."""
        m = self._model()
        for i, calls in enumerate(steps):
            think = f"step {i}: thinking about {calls}" if reasoning else ""
            m.plan.append(m.reply(said, [CALLS[c] for c in calls], think, redacted and reasoning))
        m.plan.append(m.reply(answer, reasoning="wrap up" if reasoning else ""))
        self.w.prompt(self._text())

    @rule(calls=step)
    def full_window(self, calls: list[str]) -> None:
        """A step whose reported input fills the window: the loop compacts on its own and goes on."""
        m = self._model()
        m.plan.append(m.reply("looking", [CALLS[c] for c in calls], "the window is full", usage=97_000))
        m.plan.append(m.reply("done after the compaction"))
        self.w.prompt(self._text())

    @rule(calls=step, more=st.integers(min_value=0, max_value=2))
    def window_fills_gradually(self, calls: list[str], more: int) -> None:
        """Past the background threshold (0.7 of the window) on one step, due on a later one: with
        background compaction, the summary written meanwhile is swapped in; without, compacted then."""
        m = self._model()
        m.plan.append(m.reply("reading", [CALLS[c] for c in calls], "the window grows", usage=75_000))
        for i in range(more):
            used = 80_000 + i * 1_000
            m.plan.append(m.reply(f"more {i}", [CALLS["read_small"]], "still going", usage=used))
        m.plan.append(m.reply("one more", [CALLS[calls[0]]], "nearly full", usage=97_000))
        m.plan.append(m.reply("done after the swap"))
        self.w.prompt(self._text())

    @rule(calls=step, used=st.integers(min_value=72_000, max_value=90_000))
    def turn_ends_past_threshold(self, calls: list[str], used: int) -> None:
        """A turn that ends past the background threshold but short of due: the summary being written
        outlives it, to meet an undo, a /compact, a crash or the next turn's swap."""
        m = self._model()
        m.plan.append(m.reply("reading", [CALLS[c] for c in calls], "nearly there", usage=used))
        m.plan.append(m.reply("done", usage=used + 500))
        self.w.prompt(self._text())

    @rule(failing_summary=st.booleans())
    def overflow_replay(self, failing_summary: bool) -> None:
        """The provider answers "context too long": compaction with overflow, then the question replayed."""
        m = self._model()
        m.plan.append(m.overflow())
        if failing_summary:  # refused at once (a 5xx would be retried, seconds of backoff for nothing new)
            m.summaries.append(
                ErrorResponse(400, {"error": {"message": "summary refused", "type": "invalid_request_error"}})
            )
        m.plan.append(m.reply("answered after the overflow"))
        self.w.prompt(self._text())

    @rule()
    def self_requested_compaction(self) -> None:
        """The model calls memory_compact above half the window: compacted before its next request."""
        m = self._model()
        m.plan.append(m.reply("compacting", [("memory_compact", {})], "time to compact", usage=60_000))
        m.plan.append(m.reply("carried on"))
        self.w.prompt(self._text())

    @rule(n=st.integers(min_value=2, max_value=3))
    def parallel_tasks(self, n: int) -> None:
        """Subagent tasks asked in one step run side by side; each answer goes back to its call."""
        m = self._model()
        task = CALLS["task"]
        m.plan.append(m.reply("delegating", [task] * n, "split the work"))
        m.plan.append(m.reply("the tasks are back"))
        self.w.prompt(self._text())

    @precondition(lambda self: self.world is not None and self.world.mcp)
    @rule(then_echo=st.booleans())
    def mcp_server_dies(self, then_echo: bool) -> None:
        """The MCP server exits in the middle of a call; the turn goes on without it."""
        m = self._model()
        m.plan.append(m.reply("calling", [("t_crash", {}), CALLS["read_small"]], "use the server"))
        if then_echo:
            m.plan.append(m.reply("again", [("t_echo", {"text": "still there?"})]))
        m.plan.append(m.reply("went on"))
        self.w.prompt(self._text())

    # --- interruptions -----------------------------------------------------------------------------

    @rule(with_read=st.booleans(), crash=st.booleans())
    def interrupted_during_tool(self, with_read: bool, crash: bool) -> None:
        """Ctrl-C while a tool runs (the call closed as interrupted), or the process killed then and a
        new one opening the same database and going on."""
        m = self._model()
        calls = [("block", {"why": "wait"})] + ([CALLS["read_small"]] if with_read else [])
        m.plan.append(m.reply("waiting", calls, "this takes a while"))
        turn = self.w.prompt_until_blocked(self._text())
        if crash:
            self.w.crash_and_resume(turn)
        else:
            turn.cancel()
        m.plan.clear()  # a step the interrupted turn never asked for

    @rule(calls=step, crash=st.booleans())
    def interrupted_while_streaming(self, calls: list[str], crash: bool) -> None:
        """Ctrl-C, or the process killed, while the answer streams in: text, reasoning or a tool call
        half received, at whatever moment the machine's load makes it."""
        m = self._model()
        m.plan.append(m.reply("x" * 40, [CALLS[c] for c in calls], "thinking slowly " * 4, delay=0.05))
        m.plan.append(m.reply("done"))
        turn = self.w.prompt_until_streaming(self._text())
        if crash:
            self.w.crash_and_resume(turn)
        else:
            turn.cancel()
        m.plan.clear()

    # --- the user's commands ------------------------------------------------------------------------

    @rule(focus=st.sampled_from([None, "the files"]))
    def manual_compaction(self, focus: str | None) -> None:
        self.w.loop.compact(self.w.sid, focus)

    @rule()
    def prune(self) -> None:
        self.w.loop.prune(self.w.sid)

    @rule()
    def undo_turn(self) -> None:
        with contextlib.suppress(undo.UndoRefused):
            undo.undo(self.w.store, self.w.sid)

    @rule()
    def redo_turn(self) -> None:
        with contextlib.suppress(undo.UndoRefused):
            undo.redo(self.w.store, self.w.sid)

    @rule()
    def undo_compaction(self) -> None:
        with contextlib.suppress(uncompact.UndoRefused):
            uncompact.undo_last_compaction(self.w.store, self.w.sid, estimate=estimate_messages, usable=0)

    # --- the invariants ------------------------------------------------------------------------------

    @invariant()
    def every_request_valid(self) -> None:
        if self.world is None:
            return
        errors = self.w.check()
        assert not errors, "\n".join(errors[:5])

    def teardown(self) -> None:
        HistoryMachine.sequences += 1
        if self.world is not None:
            HistoryMachine.requests += self.world.validated
            HistoryMachine.events.update(self.world.events)
            self.world.close()
            server = self.world.server
            server._rules = [r for r in server._rules if r is server.title_rule]  # this sequence's rule goes
            server._queue.clear()
            server.requests.clear()
        self.tmp.cleanup()


# The suite's fixed-seed subset: the same sequences every run, within about a minute of CPU.
CI = settings(
    derandomize=True,
    database=None,
    max_examples=20,
    stateful_step_count=10,
    deadline=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],  # not "explain": it traces every line, ~10× slower
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.timeout(900)  # ~13 s of CPU; the wall clock of a loaded machine is several times that
def test_history_never_invalid() -> None:
    run_state_machine_as_test(HistoryMachine, settings=CI)
