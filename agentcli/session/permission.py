"""Who answers a tool's permission question: config rules first, then remembered "always"
answers, then the asker (the interactive chat), or a refusal when nobody can be asked.

Every key takes ``allow`` / ``ask`` / ``deny`` or a map of patterns to them (the last matching
pattern wins, as in OpenCode). A request names one or more subjects (``patterns``): the commands of
a bash line, a path, a URL's host. Each subject is matched on its own and the strictest result wins,
so one denied command denies the whole line; a request that says the rules cannot be sure
(``unsure``) is asked even where the rules allow.

The user's own rules are a floor (``floor``): a project's config is merged over them rule by rule
(``agentcli.config.merge``), and each subject is also held to them alone, so that a project's new
pattern ("rm -i *": "allow") cannot loosen what one of the user's covers ("rm *": "deny").
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from agentcli.config import LoadedConfig
from agentcli.project_layout import NOT_SECRET, SECRET_PATTERNS
from agentcli.tools.base import PermissionAnswer, PermissionRequest

Action = Literal["allow", "ask", "deny"]
Asker = Callable[[PermissionRequest], PermissionAnswer]
Rule = Action | Mapping[str, Action] | None

# The permission key of each asking tool (write asks as "edit", as in OpenCode).
KEY = {"write": "edit", "edit": "edit", "bash": "bash", "webfetch": "webfetch"}
DEFAULTS: dict[str, Action] = {
    "edit": "ask", "bash": "ask", "webfetch": "allow", "external_directory": "ask", "private_network": "ask",
    "read": "allow", "doom_loop": "ask",
}  # fmt: skip
# Matched before the user's patterns (which, coming later, win): secret stores ask even in the project.
DEFAULT_PATTERNS: dict[str, dict[str, Action]] = {
    "read": {**dict.fromkeys(SECRET_PATTERNS, "ask"), **dict.fromkeys(NOT_SECRET, "allow")},
}
# Not a tool's permission but a question about the turn (the same call a third time in a row):
# --yes does not answer it, so `run --yes` stops a looping model instead of letting it spin.
NOT_ANSWERED_BY_YES = frozenset({"doom_loop"})
PATH_KEYS = frozenset({"external_directory", "read"})
_SEVERITY: dict[Action, int] = {"allow": 0, "ask": 1, "deny": 2}


def expand(pattern: str) -> str:
    return os.path.expanduser(pattern) if pattern.startswith("~") else pattern


def matches(key: str, subject: str, pattern: str) -> bool:
    """``*`` spans ``/``; a bash pattern ending in " *" also matches the command alone ("rm *" is
    "rm"); a path pattern also covers what is beneath it ("~/notes" = "~/notes/*"), and "DIR/*"
    covers DIR itself (listing ~/.ssh is reading it)."""
    if key == "bash":
        return _bash_pattern(pattern).match(subject) is not None
    pattern = expand(pattern)
    if fnmatch.fnmatchcase(subject, pattern):
        return True
    if key not in PATH_KEYS:
        return False
    return fnmatch.fnmatchcase(subject, pattern.rstrip("/") + "/*") or (
        pattern.endswith("/*") and subject == pattern[:-2]
    )


@lru_cache(maxsize=1024)
def _bash_pattern(pattern: str) -> re.Pattern[str]:
    """A bash pattern as a regex (compiled once: every command of every line is matched against
    every pattern). As in OpenCode, a trailing " *" may also match nothing: "rm *" covers "rm"."""
    pattern = expand(pattern)
    regex = fnmatch.translate(pattern)
    if pattern.endswith(" *"):
        regex = f"(?:{regex})|(?:{fnmatch.translate(pattern[:-2])})"
    return re.compile(regex)


def _rule_for(rules: Mapping[str, Rule], key: str) -> Rule:
    """The rule for ``key`` in ``rules``: its own entry, else the last key pattern matching it."""
    if key in rules:
        return rules[key]
    rule: Rule = None
    for pattern, value in rules.items():
        if any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(key, pattern):
            rule = value
    return rule


def _rule_action(key: str, subject: str, rule: Rule, defaults: dict[str, Action]) -> Action | None:
    """What one rule says of a subject (the last matching pattern wins), or None: it does not say."""
    if isinstance(rule, str):
        return rule  # a plain action covers every subject, secret stores included
    patterns = {**defaults, **rule} if isinstance(rule, Mapping) else defaults
    chosen: Action | None = None
    for pattern, act in patterns.items():
        if matches(key, subject, pattern):
            chosen = act
    return chosen


def wholly_denied(rule: Rule) -> bool:
    if isinstance(rule, Mapping):
        last = list(rule.items())[-1:]
        return last == [("*", "deny")]
    return rule == "deny"


def strictest(actions: list[Action]) -> Action:
    return max(actions, key=_SEVERITY.__getitem__)


@dataclass
class PermissionPolicy:
    rules: Mapping[str, Rule] = field(default_factory=dict)
    yes: bool = False  # --yes: allow everything that is not denied by config
    asker: Asker | None = None  # None: non-interactive
    remembered: set[tuple[str, str]] = field(default_factory=set)  # (key, pattern) answered "always"
    refused: list[PermissionRequest] = field(
        default_factory=list
    )  # denied only because nobody could be asked
    floor: Mapping[str, Rule] = field(default_factory=dict)  # the user's own rules: never less strict
    # One question at a time: a turn's parallel tasks share the asker (their policies share this).
    asking: threading.RLock = field(default_factory=threading.RLock)
    # Rule sets each subject is also held to, whatever ``rules`` allow: the agent's built-in limits
    # (plan edits only its plan files), set with the agent ...
    caps: tuple[Mapping[str, Rule], ...] = ()
    # ... and, in a task's session, those of the agents above it (plan's task cannot write either).
    inherited: tuple[Mapping[str, Rule], ...] = ()

    @classmethod
    def for_config(
        cls, loaded: LoadedConfig, *, yes: bool = False, asker: Asker | None = None
    ) -> PermissionPolicy:
        """The policy of a loaded config: its merged rules, held to the user's own."""
        rules = loaded.config.permission.model_dump(exclude_none=True)
        return cls(rules=rules, floor=loaded.user_permission, yes=yes, asker=asker)

    # The agent whose own rules decide over the user's (plan asks whatever they allow), if any: a
    # hint then names that agent's permission, the only place an "allow" would take effect.
    agent: str | None = None

    @staticmethod
    def key(request: PermissionRequest) -> str:
        return KEY.get(request.tool, request.tool)

    def rule(self, key: str) -> Rule:
        """The rule for ``key``: its own entry, else the last key pattern matching it ("github_*")."""
        return _rule_for(self.rules, key)

    def subject_action(self, key: str, subject: str, default: Action | None = None) -> Action:
        patterns = dict(DEFAULT_PATTERNS.get(key, {}))
        act = _rule_action(key, subject, self.rule(key), patterns) or default or DEFAULTS.get(key, "ask")
        held = (
            _rule_action(key, subject, _rule_for(r, key), {})
            for r in (self.floor, *self.caps, *self.inherited)
        )
        return strictest([act, *(a for a in held if a)])

    def above(self) -> tuple[Mapping[str, Rule], ...]:
        """What a task's session started from this policy is held to: these rules and their limits."""
        return (*self.inherited, *self.caps, self.rules)

    def withholds(self, tool: str) -> bool:
        """The rules deny ``tool`` whole (its last matching pattern is "*": "deny", or a plain "deny"):
        it is not offered to the model at all, as OpenCode leaves such tools out."""
        key = KEY.get(tool, tool)
        return any(
            wholly_denied(_rule_for(r, key)) for r in (self.rules, self.floor, *self.caps, *self.inherited)
        )

    def action(self, request: PermissionRequest) -> Action:
        key = self.key(request)
        subjects = request.patterns or [request.title]
        act = strictest([self.subject_action(key, s, request.default) for s in subjects])
        if act == "allow" and self.doubted(key, request) and not self._vouched(key, request):
            return "ask"
        return act

    def doubted(self, key: str, request: PermissionRequest) -> bool:
        """The rules cannot vouch for the request: it runs what its words do not show, or a command
        whose words are partly unknown has a rule (not "allow") about it that could match them."""
        return (
            bool(request.unsure)
            or any(self._concerned(key, s) for s in request.partial)
            or any(self._could_run(key, s) for s in request.maybe)
        )

    def deny_behind(self, key: str, request: PermissionRequest) -> str | None:
        """A deny rule that could be what a doubted request runs, or None: for a request that runs
        what the rules cannot see, any deny pattern of its key; for partly known commands, a deny
        pattern about their command."""
        if request.unsure:
            return next(iter(self._patterns(key, "deny")), None)
        partly = (p for s in request.partial for p in self._concerned(key, s, "deny"))
        maybe = (p for s in request.maybe for p in self._could_run(key, s, "deny"))
        return next(partly, None) or next(maybe, None)

    def deny_could_apply(self, request: PermissionRequest) -> bool:
        """The request's words do not show all it runs, and a deny rule could be what it runs: no
        automatic answer (--yes, a plugin) may allow it, only a human or an exact-line allow."""
        key = self.key(request)
        return self.doubted(key, request) and self.deny_behind(key, request) is not None

    def _patterns(self, key: str, *actions: Action) -> list[str]:
        found = []
        for rule in (self.rule(key), _rule_for(self.floor, key)):
            if isinstance(rule, Mapping):
                found += [p for p, a in rule.items() if a in actions]
            elif rule in actions:
                found.append("*")
        return found

    def _concerned(self, key: str, known: str, *actions: Action) -> list[str]:
        """Patterns (of ``actions``; default: all but allow) that a command whose known words are
        ``known`` could match once the rest is filled in: each pattern word up to the first with a
        ``*`` matches the known word in its place."""
        words = known.split(" ")
        found = []
        for pattern in self._patterns(key, *(actions or ("ask", "deny"))):
            pairs = zip(words, expand(pattern).split(" "), strict=False)
            if all(
                fnmatch.fnmatchcase(w, p) for w, p in itertools.takewhile(lambda wp: "*" not in wp[1], pairs)
            ):
                found.append(pattern)
        return found

    def _could_run(self, key: str, command: str, *actions: Action) -> list[str]:
        """Patterns (of ``actions``; default: all but allow) naming a command (their first word spelled
        out, not "*") that ``command``, which a program may run, could match; "" may be anything."""
        named = [p for p in self._patterns(key, *(actions or ("ask", "deny"))) if not _wild(p.split(" ")[0])]
        if command == "":
            return named
        return [p for p in self._concerned(key, command, *actions) if p in named]

    def _why(self, key: str, request: PermissionRequest) -> str:
        if request.unsure:
            return request.unsure[0]
        if any(self._concerned(key, s) for s in request.partial):
            return "some of its words are known only when it runs"
        found = next((s for s in request.maybe if self._could_run(key, s)), "")
        return f"a program whose words the rules cannot read as data may run {found or 'anything'}"

    def _vouched(self, key: str, request: PermissionRequest) -> bool:
        """The exact line is allowed by a pattern equal to it: the user read it and vouched for it. A
        project's rule counts only where the user's own rules deny nothing of this key."""
        line = " ".join(request.title.split())
        rules = [self.rule(key)]
        if self._floor_denies(key):
            rules.append(_rule_for(self.floor, key))
        return all(isinstance(r, Mapping) and r.get(line) == "allow" for r in rules)

    def _floor_denies(self, key: str) -> bool:
        rule = _rule_for(self.floor, key)
        return rule == "deny" or (isinstance(rule, Mapping) and "deny" in rule.values())

    def decide(self, request: PermissionRequest) -> PermissionAnswer:
        act = self.action(request)
        if act == "deny":
            return "deny"
        key = self.key(request)
        if act == "allow":
            return "once"
        # --yes answers a question, never one a deny rule could be behind: then a human is asked.
        if self.yes and key not in NOT_ANSWERED_BY_YES and not self.deny_could_apply(request):
            return "once"
        subjects = request.patterns or [request.title]
        if not request.unsure and all(self._remembered(key, s) for s in subjects):
            return "once"
        if self.asker is None:
            self.refused.append(request)
            return "deny"
        with self.asking:
            if not request.unsure and all(self._remembered(key, s) for s in subjects):
                return "once"  # answered "always" while this question waited for another
            answer = self.asker(request)
        if answer == "always":
            for p in request.patterns or ["*"]:
                # A path's "always" covers its folder; a command is remembered exactly.
                self.remembered.add((key, suggest(key, p) if key in PATH_KEYS else p))
        return answer

    def _remembered(self, key: str, subject: str) -> bool:
        if (key, "*") in self.remembered or (key, subject) in self.remembered:
            return True
        return key in PATH_KEYS and any(k == key and matches(key, subject, p) for k, p in self.remembered)

    def hint(self, request: PermissionRequest) -> str:
        """One line for the human when nobody could be asked: what was refused and how to allow it."""
        key = self.key(request)
        subjects = request.patterns or [request.title]
        if self.action(request) == "deny":
            denied = next(
                (s for s in subjects if self.subject_action(key, s, request.default) == "deny"), subjects[0]
            )

            def denies(sets: tuple[Mapping[str, Rule], ...]) -> bool:
                return any(_rule_action(key, denied, _rule_for(r, key), {}) == "deny" for r in sets)

            if denies(self.caps):
                return (
                    f"{request.tool} refused: the {self.agent or 'current'} agent does not allow it: {denied}"
                )
            if denies(self.inherited):
                return f"{request.tool} refused: the agent that started this task does not allow it: {denied}"
            return f"{request.tool} refused by permission.{key} in the config: {denied}"
        behind = self.deny_behind(key, request) if self.doubted(key, request) else None
        if self.yes and behind is not None:
            why = self._why(key, request)
            line = json.dumps(" ".join(request.title.split()))
            return (
                f"{request.tool} refused under --yes: the rules cannot tell what it runs ({why}) and "
                f'permission.{key} denies "{behind}" — to run it, allow this exact line: '
                f"{self._where(key, line[1:-1])}"
            )
        asked = next(
            (s for s in subjects if self.subject_action(key, s, request.default) != "allow"), subjects[0]
        )
        why = f" ({self._why(key, request)})" if self.doubted(key, request) else ""
        # A pattern cannot vouch for a line the rules cannot read; only the exact line can.
        doubted = self.doubted(key, request) and self.subject_action(key, asked, request.default) == "allow"
        pattern = json.dumps(" ".join(request.title.split()))[1:-1] if doubted else suggest(key, asked)
        return (
            f"{request.tool} refused, nobody to ask: {request.title}{why} — allow it with --yes or "
            f"{self._where(key, pattern)} in opencode.json"
        )

    def _where(self, key: str, pattern: str) -> str:
        rule = f'"permission": {{"{key}": {{"{pattern}": "allow"}}}}'
        return f'"agent": {{"{self.agent}": {{{rule}}}}}' if self.agent else rule


def _wild(word: str) -> bool:
    return any(c in word for c in "*?[")


def suggest(key: str, subject: str) -> str:
    """A pattern a user could allow: the folder of a path, the command and its first word of a line."""
    if key in PATH_KEYS:
        home = os.path.expanduser("~")
        parent = os.path.dirname(subject) or subject
        shown = "~" + parent[len(home) :] if parent.startswith(home + os.sep) else parent
        return shown.rstrip("/") + "/*"
    if key == "bash":
        words = subject.split()
        return f"{words[0]} *" if words else "*"
    return subject
