"""Merging config sources: dicts deeply, and a project's file over the user's as over a floor.

The user's own files are a floor a project cannot lower. A project may add permission rules and
make them stricter, never remove or loosen the user's: pattern maps merge rule by rule with the
stricter action winning per pattern, and a project's plain action ("ask") covers what the user left
open without replacing the user's patterns. A project may switch redaction on, never off. (Even so,
a project's *new* pattern may match what a user's pattern covers: ``agentcli.session.permission``
therefore also holds every request to the user's own rules.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Dicts merge key by key; scalars and lists from `over` replace."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}

# The sections whose merge is the floor's; every other key merges as usual (nearer wins).
FLOOR_SECTIONS = ("permission", "redact")


def stricter(a: str, b: str) -> str:
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def _is_action(value: Any) -> bool:
    return isinstance(value, str) and value in _SEVERITY


def _is_rule(value: Any) -> bool:
    """An action, or a map of patterns to actions (what every permission key takes)."""
    if _is_action(value):
        return True
    return isinstance(value, Mapping) and all(_is_action(v) for v in value.values())


def merge_rule(user: Any, project: Any) -> Any:
    """One permission key: the project's rule over the user's, never below it for any pattern."""
    if user is None or not _is_rule(project):
        return project if user is None else user
    if not _is_rule(user):
        return project
    if isinstance(user, str) and isinstance(project, str):
        return stricter(user, project)
    if isinstance(user, str):  # the user's action covers every subject: each project pattern at least it
        return {"*": user, **{p: stricter(user, a) for p, a in project.items()}}
    if isinstance(project, str):
        # The project's action covers what the user's patterns leave open: first, so that (the last
        # matching pattern winning) each of the user's patterns still decides its own subjects.
        return {"*": project, **{p: stricter(a, project) for p, a in user.items()}}
    out = {p: stricter(a, project[p]) if p in project else a for p, a in user.items()}
    out.update({p: a for p, a in project.items() if p not in user})
    return out


def merge_project(base: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """``project`` (a project file's data) merged over ``base`` (what the files before it set)."""
    out = deep_merge(dict(base), {k: v for k, v in project.items() if k not in FLOOR_SECTIONS})
    permission = project.get("permission")
    if isinstance(permission, Mapping):
        rules = dict(out.get("permission") or {})
        for key, rule in permission.items():
            rules[key] = merge_rule(rules.get(key), rule)
        out["permission"] = rules
    redact = project.get("redact")
    if isinstance(redact, Mapping):
        held = dict(out.get("redact") or {})
        for key, value in redact.items():
            # Redaction switched on stays on: a switch merges as "either".
            held[key] = (held.get(key) is True or value) if isinstance(value, bool) else value
        out["redact"] = held
    return out
