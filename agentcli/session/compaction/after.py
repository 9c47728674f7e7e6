"""What a compaction writes after its summary: what it carries past it from the records (the ledger,
the user's own words, the skills: ``carryover``), and, when the turn goes on, the user message that
lets it (the "continue" text, or the question re-sent verbatim). The I/O of ``Compactor.process``
once its summary is written; the decisions are ``carryover`` and ``compaction_plan``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from agentcli.config import Config
from agentcli.plugins.manager import Plugins
from agentcli.session.compaction import carryover, kept_words, plan
from agentcli.store import ids
from agentcli.store.records import CarryoverPart, Part, TextPart, UserMessage, WithParts
from agentcli.store.store import Store

_part_adapter: TypeAdapter[Any] = TypeAdapter(Part)


@dataclass
class AfterSummary:
    store: Store
    plugins: Plugins
    config: Config
    model: str  # the session model's name, on the messages written
    usable: int
    directory: str

    def carry(
        self,
        sid: str,
        summary_id: str,
        history: list[WithParts],
        replay: WithParts | None,
        tail_start_id: str | None,
        resent: str | None,
    ) -> None:
        """Store what this compaction carries past its summary (``compaction.ledger``). Not redacted:
        copies of records the model is sent as they are, and the user's words must stay verbatim."""
        cfg = self.config.compaction
        if not cfg.ledger:
            return
        budget = cfg.user_message_tokens
        budget = kept_words.default_budget(self.usable) if budget is None else budget
        kept = plan.hide_completed(history)
        carried = carryover.for_compaction(
            history, kept, replay, tail_start_id, resent, budget, self.directory
        )
        part = CarryoverPart(id=ids.ascending("prt"), session_id=sid, message_id=summary_id)
        self.store.put_part(part.model_copy(update={"carryover": carried}))

    def go_on(
        self,
        sid: str,
        replay: WithParts | None,
        in_progress: WithParts | None,
        overflow: bool,
        tail_start_id: str | None,
    ) -> str | None:
        """Write what lets the turn go on after the summary; the id of the user message re-sent, if any."""
        if replay is not None:
            self._resend(sid, replay)  # the question that overflowed (OpenCode's replay)
            return replay.id
        hook = {"enabled": True}
        self.plugins.hook.compaction_autocontinue(
            input={"session_id": sid, "overflow": overflow}, output=hook
        )
        if not hook["enabled"]:
            return None
        if in_progress is not None and (tail_start_id is None or in_progress.id < tail_start_id):
            # Its turn's tool steps are in the summary, the question only there too: the model gets
            # it word for word, as the newest message, rather than a bare "continue". (A compaction
            # without a model may keep it in its tail after all: then it is there verbatim.)
            self._resend(sid, in_progress)
            return in_progress.id
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid, model=self.model)
        self.store.put_message(msg)
        text = plan.continue_text(overflow)
        part = TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=text, synthetic=True)
        self.store.put_part(part.model_copy(update={"compaction_continue": True}))
        return None

    def _resend(self, sid: str, question: WithParts) -> None:
        """Re-send a user message after the summary, media turned into placeholders."""
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid, model=self.model)
        self.store.put_message(msg)
        for spec in plan.replay_parts(question):
            if spec.get("type") == "text":
                # The original stays in the history (or the kept tail's range); the model view drops
                # it (no double ask).
                spec = {**spec, "replay_of": question.id}
            self.store.put_part(
                _part_adapter.validate_python(
                    {**spec, "id": ids.ascending("prt"), "session_id": sid, "message_id": msg.id}
                )
            )
