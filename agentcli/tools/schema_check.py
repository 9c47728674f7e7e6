"""Check a tool call's arguments against the tool's JSON schema (the subset our tools use).

Lenient where models are commonly sloppy and the meaning is unambiguous: a number sent as a
string ("20"), an integral float for an integer, ``null`` for an optional parameter, and unknown
extra keys (dropped, as OpenCode's schemas strip them)."""

from __future__ import annotations

import re
from typing import Any

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _coerce(value: Any, expected: str) -> Any:
    if expected in ("integer", "number") and isinstance(value, str) and _NUMBER.match(value.strip()):
        value = float(value.strip())
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if (
        expected == "number"
        and isinstance(value, float)
        and value.is_integer()
        and not isinstance(value, bool)
    ):
        return int(value)
    return value


def check(value: Any, schema: dict[str, Any], where: str, problems: list[str]) -> Any:
    """Validate ``value``; append human-readable problems; return the (coerced) value."""
    expected = schema.get("type")
    if expected:
        value = _coerce(value, expected)
        kind = _kind(value)
        ok = (
            kind == expected
            or (expected == "integer" and kind == "number" and isinstance(value, int))
            or (expected == "number" and kind == "number")
        )
        if not ok:
            problems.append(
                f"{where} must be {'an' if expected[0] in 'aeiou' else 'a'} {expected}, got {kind}"
            )
            return value
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problems.append(f"{where} must be one of {allowed}, got {value!r}")
    if expected == "array" and "items" in schema:
        value = [check(item, schema["items"], f"{where}[{i}]", problems) for i, item in enumerate(value)]
    if expected == "object":
        value = check_object(value, schema, where, problems)
    return value


def check_object(
    value: dict[str, Any], schema: dict[str, Any], where: str, problems: list[str]
) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    out: dict[str, Any] = {}

    def name(key: str) -> str:
        return f"{where}.{key}" if where else key

    for key in schema.get("required", []):
        if value.get(key) is None:
            problems.append(f"missing required parameter {name(key)}")
    extra = schema.get("additionalProperties", False)
    for key, item in value.items():
        if item is None:
            continue  # null means "not given"
        if key in props:
            out[key] = check(item, props[key], name(key), problems)
        elif extra:  # a free-form object (e.g. the memory tool's args) keeps what it is given
            out[key] = check(item, extra, name(key), problems) if isinstance(extra, dict) else item
        # other unknown keys are dropped
    return out


def validate(args: dict[str, Any], schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    problems: list[str] = []
    cleaned = check_object(args, schema, "", problems)
    return cleaned, problems
