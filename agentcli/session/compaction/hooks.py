"""What a plugin may say about a compaction (``session_compacting``, OpenCode's newer hooks) and how
far it is heard. A plugin may write the summary itself (no model call), cancel a compaction someone
asked for, and decline or delay an automatic one, within limits that keep a session alive: a hard
overflow (the provider rejected the request, or it certainly will not fit) compacts anyway, and a
compaction is delayed at most ``MAX_DELAYS`` times per turn. ``hear`` is pure; ``ask`` calls the hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MAX_DELAYS = 3

Action = Literal["compact", "cancel", "decline", "delay"]


def hook_output() -> dict[str, Any]:
    """The ``output`` the hook is handed (see hookspecs.session_compacting)."""
    return {"context": [], "prompt": None, "summary": None, "block": False, "delay": False}


@dataclass(frozen=True)
class Heard:
    action: Action
    summary: str | None = None  # the plugin's own summary text: no summary request is made
    overruled: str | None = None  # why a plugin's "block" / "delay" was not followed


def over(hard_limit: int, tokens: int) -> bool:
    """The window is at the model's hard limit (input, else context; 0: unknown)."""
    return bool(hard_limit) and tokens >= hard_limit


def ask(
    plugins: Any, output: dict[str, Any], session_id: str, auto: bool, overflow: bool, hard: bool, delays: int
) -> Heard:
    """Call ``session_compacting`` (``output``: ``hook_output()``, filled in place) and hear it."""
    plugins.hook.session_compacting(
        input={"session_id": session_id, "auto": auto, "overflow": overflow, "hard": hard}, output=output
    )
    return hear(output, automatic=auto, hard=hard, delays=delays)


def hear(output: dict[str, Any], *, automatic: bool, hard: bool, delays: int) -> Heard:
    """``automatic``: the loop queued it (not /compact, agentcli compact or a plugin's compact());
    ``hard``: the window no longer fits; ``delays``: how often this turn's compactions were delayed."""
    summary = output.get("summary")
    summary = summary if isinstance(summary, str) and summary.strip() else None
    block, delay = bool(output.get("block")), bool(output.get("delay"))
    if not (block or delay):
        return Heard("compact", summary)
    if not automatic:
        # Someone asked for this one: a plugin may cancel it; "later" means nothing to them.
        return Heard("cancel") if block else Heard("compact", summary)
    wish = "declined" if block else "delayed"
    if hard:
        return Heard("compact", summary, f"a plugin {wish} it, but the context no longer fits")
    if block:
        return Heard("decline")
    if delays >= MAX_DELAYS:
        return Heard("compact", summary, f"a plugin delayed it {delays} times already this turn")
    return Heard("delay")
