"""What a compaction carries past its summary (``agentcli.store.artifacts.Carryover``), decided from
the records: the ledger, the user's own words and the skills loaded, each merged with what the
previous compaction carried. Pure; the compactor stores the result on the summary message.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.session.compaction import kept_words, ledger
from agentcli.session.request.history import completes_compaction
from agentcli.store.artifacts import Carryover
from agentcli.store.records import WithParts


def previous(history: Sequence[WithParts]) -> tuple[Carryover | None, bool]:
    """The carryover of the newest completed compaction in ``history`` (None: none, or one made
    before carryovers existed), and whether ``history`` starts with the session (no compaction)."""
    summaries = [m for m in history if completes_compaction(m)]
    if not summaries:
        return None, True
    return max(summaries, key=lambda m: m.id).carryover(), False


def build(
    history: Sequence[WithParts],
    *,
    visible: set[str],
    budget: int,
    directory: str | None = None,
    current: Carryover | None = None,
) -> Carryover:
    """The carryover of a compaction of ``history`` (the window before its marker, earlier
    marker/summary pairs included). ``visible``: ids of the messages still in the window after it
    (the kept tail, a re-sent question's original): their words and skills are not repeated.
    ``budget``: tokens for the user's words. ``current``: what the newest compaction in
    ``history`` carried, when the caller has it (else it is looked up)."""
    before, from_start = previous(history) if current is None else (current, False)
    through = before.ledger.through if before is not None else None
    words, left_out = kept_words.keep(
        before.user_messages if before else [],
        before.left_out if before else 0,
        history,
        through=through,
        budget=budget,
        from_start=from_start,
    )
    skills = ledger.loaded_skills(before.skills if before else [], history, through)
    return Carryover(
        ledger=ledger.fold(before.ledger if before else None, history, directory=directory),
        user_messages=[m.model_copy(update={"visible": m.message_id in visible}) for m in words],
        left_out=left_out,
        skills=[s.model_copy(update={"visible": s.message_id in visible}) for s in skills],
    )


def for_compaction(
    history: Sequence[WithParts],
    unhidden: Sequence[WithParts],
    replay: WithParts | None,
    tail_start_id: str | None,
    resent: str | None,
    budget: int,
    directory: str | None,
) -> Carryover:
    """``build`` for a compaction of ``history`` that keeps ``unhidden`` (``history`` without earlier
    marker/summary pairs) from ``tail_start_id`` on, re-sends ``resent`` verbatim, and replays
    ``replay`` (after an overflow: newer than ``history``, its words are folded in too)."""
    start = next((i for i, m in enumerate(unhidden) if m.id == tail_start_id), len(unhidden))
    visible = {m.id for m in unhidden[start:]} | ({resent} if resent else set())
    return build(
        [*history, *([replay] if replay is not None else [])],
        visible=visible,
        budget=budget,
        directory=directory,
    )


def current(history: Sequence[WithParts], *, directory: str | None = None) -> Carryover:
    """The carryover as it stands now (``sessions show``, plugins): the last compaction's merged
    with ``history`` (the window) since; nothing counts as visible."""
    return build(history, visible=set(), budget=kept_words.MAX_TOKENS, directory=directory)
