"""Questions for the user, asked in the client (``session/request_permission``): a tool's permission
(allow once / always allow / reject, the chat's three answers) and the workspace-trust question.

The permission question comes from the turn's thread, after the rules and plugins had their say
(``PermissionPolicy``): it names the tool call it is about, which the client has already been shown.
A cancelled turn, or a client gone, is a refusal.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import PermissionOption, ToolCallUpdate

from agentcli.acp import tool_calls
from agentcli.acp.outbox import Cancelled, Outbox
from agentcli.acp.updates import TurnUpdates
from agentcli.store import ids
from agentcli.tools.base import PermissionAnswer, PermissionRequest
from agentcli.trust import TrustState

log = logging.getLogger(__name__)

OPTIONS = [
    PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
]
ANSWERS: dict[str, PermissionAnswer] = {"once": "once", "always": "always", "deny": "deny"}
TRUST_OPTIONS = [
    PermissionOption(option_id="trust", name="Trust this folder", kind="allow_always"),
    PermissionOption(option_id="not-now", name="Not now (this session only)", kind="reject_once"),
    PermissionOption(option_id="never", name="Don't trust this config", kind="reject_always"),
]
# A tool's own question keeps the call's title; these are about something else than the call itself.
OWN_TITLE = frozenset({"external_directory", "read", "private_network", "doom_loop"})


def selected(response: Any) -> str | None:
    outcome = getattr(response, "outcome", None)
    return getattr(outcome, "option_id", None) if getattr(outcome, "outcome", "") == "selected" else None


@dataclass
class ClientAsker:
    """The loop's ``Asker`` for one ACP session (called in the turn's thread)."""

    outbox: Outbox
    client: Any
    session_id: str
    updates: TurnUpdates
    abort: Callable[[], threading.Event | None]

    def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        part = self.updates.asked_about(request)
        call_id = part.id if part is not None else ids.ascending("prt")
        if part is None:  # a question outside any call the client knows: announce one to hang it on
            self.outbox.notify(
                self.session_id, start_tool_call(call_id, request.title, kind="other", status="pending")
            )
        own = part is None or request.tool in OWN_TITLE or request.tool != part.tool
        asked = [tool_content(text_block(f"asked because {r}")) for r in request.unsure]
        if part is None:
            tool_call = ToolCallUpdate(tool_call_id=call_id, title=request.title, content=asked or None)
        else:  # the call as its tool_call updates show it, so a client needs nothing else to ask
            directory = self.updates.directory
            shown = tool_calls.content(part, directory)
            where = tool_calls.locations(part, directory)
            if request.texts is not None and part.tool in ("edit", "write") and not own:
                shown, where = tool_calls.asked_change(part, directory, request.texts)
            tool_call = ToolCallUpdate(
                tool_call_id=call_id,
                title=request.title if own else tool_calls.title(part, directory),
                kind=tool_calls.kind(part),
                status=tool_calls.STATUS[part.state.status],
                content=(shown + asked) or None,
                locations=where or None,
                raw_input=part.state.input or None,
            )
        try:
            response = self.outbox.call(
                lambda: self.client.request_permission(
                    session_id=self.session_id, tool_call=tool_call, options=OPTIONS
                ),
                self.abort(),
            )
            answer = ANSWERS.get(selected(response) or "", "deny")
        except (Cancelled, ConnectionError):
            answer = "deny"
        except Exception as exc:  # a client that cannot ask: nobody said yes
            log.warning("the permission question failed: %s", exc)
            answer = "deny"
        if part is None:
            status: Literal["completed", "failed"] = "completed" if answer != "deny" else "failed"
            self.outbox.notify(self.session_id, update_tool_call(call_id, status=status))
        return answer


def trust_text(state: TrustState) -> str:
    lines = [f"This folder's project config ({state.root}) reaches beyond the project:"]
    lines += [f"- `{risk.key}`: {risk.reason}" for risk in state.risks]
    lines.append("Until you trust the folder these keys are ignored (nothing is read, loaded or sent).")
    return "\n".join(lines)


async def ask_trust(outbox: Outbox, client: Any, session_id: str, state: TrustState) -> bool | None:
    """The workspace-trust question, as a permission request in the client. True / False: the
    user's answer, to be remembered for this folder and config; None: not now (untrusted for this
    session only: the question comes back next time)."""
    call_id = ids.ascending("prt")
    outbox.notify(
        session_id,
        start_tool_call(
            call_id,
            "Trust this folder's project config?",
            kind="other",
            status="pending",
            content=[tool_content(text_block(trust_text(state)))],
        ),
    )
    await outbox.flush()
    try:
        response = await client.request_permission(
            session_id=session_id, tool_call=ToolCallUpdate(tool_call_id=call_id), options=TRUST_OPTIONS
        )
        choice = selected(response)
    except Exception as exc:  # no answer: untrusted, for this session only
        log.warning("the trust question failed: %s", exc)
        choice = None
    answer = {"trust": True, "never": False}.get(choice or "")
    told = {True: "trusted (remembered)", False: "not trusted (remembered)", None: "not trusted for now"}
    outbox.notify(
        session_id,
        update_tool_call(
            call_id,
            status="completed" if answer else "failed",
            content=[tool_content(text_block(told[answer]))],
        ),
    )
    return answer
