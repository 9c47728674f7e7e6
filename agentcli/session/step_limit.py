"""The end of a long turn (OpenCode's max-steps behaviour): the last step a turn may take offers the
model no tools and asks it to wrap up, so the user gets an answer — what was done, what is left —
instead of only an error."""

from __future__ import annotations

import dataclasses
from functools import cache
from importlib import resources

from agentcli.llm.stream import ChatRequest
from agentcli.session.processor import StepPolicy
from agentcli.session.toolrunner import ToolRunner

TOOLS_DISABLED = "Tools are disabled: this turn reached its step limit. Answer with text only."


@cache
def wrap_up_text() -> str:
    return (
        resources.files("agentcli.session")
        .joinpath("prompts/max_steps.txt")
        .read_text(encoding="utf-8")
        .strip()
    )


def last_step(
    request: ChatRequest, policy: StepPolicy, runner: ToolRunner, max_steps: int
) -> tuple[ChatRequest, StepPolicy]:
    """The request and policy of the turn's last step. The request to wrap up goes with this request
    only (it is not stored); a tool call the model makes anyway is refused and ends the turn."""
    messages = [*request.messages, {"role": "user", "content": wrap_up_text()}]
    refuse = runner.refusing(
        TOOLS_DISABLED, f"stopped after {max_steps} steps (max steps): the model still called tools"
    )
    return dataclasses.replace(request, messages=messages, tools=None), dataclasses.replace(
        policy, run_tools=refuse
    )
