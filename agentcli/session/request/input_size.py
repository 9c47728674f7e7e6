"""A user message larger than the model's window is never sent: no compaction can make it fit (the
newest question is always kept word for word), so sending it only buys a rejected request and a
useless summary. The front end says how much fits and may send it as a file instead: the whole text
saved where the model's read and grep tools reach it without a question, the message naming it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.llm.tokens import CHARS_PER_TOKEN, estimate, estimate_json
from agentcli.store.records import TextPart
from agentcli.tools.truncate import save_output

if TYPE_CHECKING:  # only named: the chat imports this module before it builds a session
    from agentcli.session.runtime import SessionRuntime

HEAD_CHARS = 2000  # of a message sent as a file, what stays in the message itself (its opening words)


class InputTooLarge(Exception):
    """``tokens``: the message's estimate; ``room``: what one message may take on this model."""

    def __init__(self, tokens: int, room: int, model: str) -> None:
        super().__init__(f"the message is ~{tokens:,} tokens; {model} takes ~{room:,} in one message")
        self.tokens, self.room, self.model = tokens, room, model

    @property
    def fits_chars(self) -> int:
        """About how many characters of text fit."""
        return self.room * CHARS_PER_TOKEN


def message_tokens(text: str, attached: Sequence[Any] = ()) -> int:
    """The message's text and its attached text parts (a file's contents, a folder's listing)."""
    return estimate(text) + sum(estimate(p.text) for p in attached if isinstance(p, TextPart))


def room(usable: int, system: Sequence[str], tools: Sequence[dict[str, Any]]) -> int:
    """Tokens one user message may take: the usable window less what every request carries (the
    system prompt, the tool definitions); 0 when the window is unknown (then nothing is refused)."""
    if not usable:
        return 0
    return max(1, usable - estimate_json(list(system)) - estimate_json(list(tools)))


def as_file(text: str, output_dir: Path) -> str:
    """The message to send instead of ``text``: its opening words, then where the whole is saved."""
    path = save_output(text, output_dir)
    lines = text.count("\n") + 1
    head = text[:HEAD_CHARS]
    cut = head.rfind("\n")
    if cut > HEAD_CHARS // 2:
        head = head[:cut]  # end the excerpt at a line's end
    return (
        f"{head}\n\n[This message was too long to send whole ({lines:,} lines, {len(text):,} characters). "
        f"All of it is saved in the file {path}: use the read tool with offset/limit, or grep, "
        "to see the parts you need.]"
    )


def check_input(
    runtime: SessionRuntime, session_id: str | None, text: str, attached: Sequence[Any] = ()
) -> None:
    """Raise InputTooLarge when this message alone would not fit in ``runtime``'s model's window."""
    usable = runtime.usable()
    tokens = message_tokens(text, attached)
    if not usable or tokens * 2 < usable:  # unknown window, or far from it: no system prompt built
        return
    from agentcli.session.toolset import tools_for

    runtime.start_plugins()
    assert runtime.agent is not None
    offered = tools_for(runtime, runtime.agent, child=runtime.options.child, start=False)
    fits = room(usable, runtime.system_prompt(session_id or ""), [t.schema() for t in offered.values()])
    if fits and tokens > fits:
        raise InputTooLarge(tokens, fits, runtime.model.name)


def as_file_for(runtime: SessionRuntime, text: str) -> str:
    """``as_file``, in the folder where ``runtime`` spills tool outputs (the model reads there freely)."""
    return as_file(text, runtime.options.data_dir / "tool-output")
