"""Who answers a tool's permission question: config rules first, then remembered "always"
answers, then the asker (the interactive chat), or a refusal when nobody can be asked."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from agentcli.tools.base import PermissionAnswer, PermissionRequest

Action = Literal["allow", "ask", "deny"]
Asker = Callable[[PermissionRequest], PermissionAnswer]

# The permission key of each asking tool (write asks as "edit", as in OpenCode).
KEY = {"write": "edit", "edit": "edit", "bash": "bash", "webfetch": "webfetch"}
DEFAULTS: dict[str, Action] = {"edit": "ask", "bash": "ask", "webfetch": "allow", "doom_loop": "ask"}
# Not a tool's permission but a question about the turn (the same call a third time in a row):
# --yes does not answer it, so `run --yes` stops a looping model instead of letting it spin.
NOT_ANSWERED_BY_YES = frozenset({"doom_loop"})


@dataclass
class PermissionPolicy:
    rules: Mapping[str, Action | Mapping[str, Action] | None] = field(default_factory=dict)
    yes: bool = False  # --yes: allow everything that is not denied by config
    asker: Asker | None = None  # None: non-interactive
    remembered: set[tuple[str, str]] = field(default_factory=set)  # (key, pattern) answered "always"

    def action(self, request: PermissionRequest) -> Action:
        key = KEY.get(request.tool, request.tool)
        rule = self.rules.get(key)
        if isinstance(rule, Mapping):
            # Pattern rules (bash): the last matching pattern wins, as in OpenCode's wildcard rules.
            chosen: Action | None = None
            subject = request.patterns[0] if request.patterns else request.title
            for pattern, act in rule.items():
                if fnmatch.fnmatchcase(subject, pattern):
                    chosen = act
            return chosen or DEFAULTS.get(key, "ask")
        return rule or DEFAULTS.get(key, "ask")

    def decide(self, request: PermissionRequest) -> PermissionAnswer:
        act = self.action(request)
        if act == "deny":
            return "deny"
        key = KEY.get(request.tool, request.tool)
        if act == "allow" or (self.yes and key not in NOT_ANSWERED_BY_YES):
            return "once"
        if any((key, p) in self.remembered for p in request.patterns or [request.title]):
            return "once"
        if any(k == key and p == "*" for k, p in self.remembered):
            return "once"
        if self.asker is None:
            return "deny"
        answer = self.asker(request)
        if answer == "always":
            for p in request.patterns or ["*"]:
                self.remembered.add((key, p))
        return answer
