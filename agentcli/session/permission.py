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
DEFAULTS: dict[str, Action] = {"edit": "ask", "bash": "ask", "webfetch": "allow"}


@dataclass
class PermissionPolicy:
    rules: Mapping[str, Action | Mapping[str, Action] | None] = field(default_factory=dict)
    yes: bool = False  # --yes: allow everything that is not denied by config
    asker: Asker | None = None  # None: non-interactive
    remembered: set[tuple[str, str]] = field(default_factory=set)  # (key, pattern) answered "always"
    refused: list[PermissionRequest] = field(default_factory=list)  # denied only because nobody could be asked

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
        if act == "allow" or self.yes:
            return "once"
        key = KEY.get(request.tool, request.tool)
        if any((key, p) in self.remembered for p in request.patterns or [request.title]):
            return "once"
        if any(k == key and p == "*" for k, p in self.remembered):
            return "once"
        if self.asker is None:
            self.refused.append(request)
            return "deny"
        answer = self.asker(request)
        if answer == "always":
            for p in request.patterns or ["*"]:
                self.remembered.add((key, p))
        return answer
