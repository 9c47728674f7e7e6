"""A tool's arguments as a pydantic model: the JSON schema the model is shown is generated from it, and
the arguments the model sends are validated by it, with the problems told in the words models know.

One way for every tool: built-in tools declare a ``ToolParams`` model; a plugin's pydantic model or
JSON schema and an MCP server's schema come through `JsonObject` (the schema is theirs, the object is
passed through: an MCP server checks its own arguments, a plugin's schema is checked by ``jsonschema``).

Lenient where models are commonly sloppy and the meaning is unambiguous: ``null`` for a parameter
means "not given", unknown keys are dropped (as OpenCode's schemas strip them), a number may come as
a string ("20") and an integral float may stand for an integer (pydantic's lax mode)."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, core_schema

P = TypeVar("P", bound=BaseModel)

# The order of a schema's keys as OpenCode's schemas have them (the bytes sent are the same as its).
_KEY_ORDER = ("type", "enum", "items", "properties", "required", "additionalProperties", "description")


class ToolParams(BaseModel):
    """A built-in tool's arguments. Its schema closes the object (``additionalProperties: false``)
    while validation drops unknown keys: the model is told the exact shape and forgiven extras."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})


class JsonObject(RootModel[dict[str, Any]]):
    """Any JSON object, taken as sent (``null`` values kept): the schema the model sees is the
    tool's own (``Tool.parameters``)."""

    schema_given: ClassVar[bool] = True


class _ToolSchema(GenerateJsonSchema):
    """pydantic's schema as a tool's: no titles, ``X | None = None`` shown as ``X`` (null means "not
    given"), no ``default: null``."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if "default_factory" not in schema and schema.get("default") is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)


def _tidy(node: Any, defs: dict[str, Any]) -> Any:
    """References inlined, titles dropped, keys in OpenCode's order."""
    if isinstance(node, list):
        return [_tidy(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _tidy(
            {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}, defs
        )
    out = {}
    for key in sorted(node, key=lambda k: _KEY_ORDER.index(k) if k in _KEY_ORDER else len(_KEY_ORDER)):
        if key in ("title", "$defs"):
            continue
        value = node[key]
        out[key] = (
            {n: _tidy(p, defs) for n, p in value.items()} if key == "properties" else _tidy(value, defs)
        )
    return out


@cache
def params_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a tool's model is shown for ``model`` (computed once per model)."""
    schema = model.model_json_schema(schema_generator=_ToolSchema)
    return _tidy(schema, schema.get("$defs", {}))


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _kind(value: Any) -> str:
    """A JSON value's type in JSON schema's words."""
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


_EXPECTED = {
    "string": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "list": "an array",
    "dict": "an object",
    "model": "an object",
}


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _problem(error: ErrorDetails) -> str:
    where = _where(error["loc"]) or "the arguments"
    kind = error["type"]
    if kind == "missing":
        return f"missing required parameter {where}"
    if kind == "value_error":  # a check of the model's own (a plugin's JSON schema)
        return str(error.get("ctx", {}).get("error", error["msg"]))
    if kind in ("literal_error", "enum"):
        return f"{where} must be one of {error.get('ctx', {}).get('expected', '')}, got {error['input']!r}"
    expected = (
        _EXPECTED.get(kind.split("_")[0]) if kind.endswith(("_type", "_parsing", "_from_float")) else None
    )
    if expected:
        return f"{where} must be {expected}, got {_kind(error['input'])}"
    return f"{where}: {error['msg']}"


def validate(model: type[P], args: dict[str, Any]) -> P:
    """``args`` as an instance of ``model`` (raises pydantic's ValidationError; see `problems`)."""
    return model.model_validate(args if getattr(model, "schema_given", False) else _drop_nulls(args))


def problems(exc: ValidationError) -> str:
    """What is wrong with the arguments, on one line."""
    return "; ".join(_problem(e) for e in exc.errors())


def checked_object(schema: dict[str, Any]) -> type[JsonObject]:
    """A JSON object checked against a JSON schema (a plugin's): each problem named by its path."""

    class Checked(JsonObject):
        @model_validator(mode="after")
        def _check(self) -> Checked:
            from jsonschema import Draft202012Validator  # loaded with the first call of such a tool

            self.root = _drop_nulls(self.root)
            errors = sorted(Draft202012Validator(schema).iter_errors(self.root), key=lambda e: list(e.path))
            if errors:
                raise ValueError(
                    "; ".join(f"{_where(tuple(e.path)) or 'the arguments'}: {e.message}" for e in errors)
                )
            return self

    return Checked
