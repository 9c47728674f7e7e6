"""Which requests the lean path sends to Anthropic's Messages API, and the exact HTTP request: the URL,
headers and body litellm 1.106 sends for an ``anthropic/`` model (its ``AnthropicConfig``:
``llms/anthropic/chat/transformation.py`` and ``common_utils.py``), checked against litellm's own
requests by tests/test_llm_anthropic_parity.py.

Served: ``anthropic/<id>`` and bare Claude ids litellm files under Anthropic, with the parameters
agentcli sends (messages, tools, max_tokens, temperature, top_p, top_k, stop, extra headers, and
``thinking`` on models that take it as given). Anything else — ``reasoning_effort``, adaptive-thinking
models asked to think (litellm rewrites that per model), request fields we do not translate — goes
through litellm, as does everything under ``AGENTCLI_LLM_PATH=litellm``.

Where litellm's request is wrong for Anthropic we do not copy it, on purpose:
- a base URL ending in ``/v1`` (OpenCode's and the Anthropic SDK's form) gets ``/messages``, not
  litellm's ``/v1/v1/messages``;
- with thinking enabled, ``temperature`` is left out (Anthropic answers 400 to any value but 1);
- a custom base URL with no key sends none (a local proxy may need none) instead of refusing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentcli.llm import anthropic_messages as wire
from agentcli.llm import cache, modelmap
from agentcli.llm.events import ChatRequest

DEFAULT_BASE = "https://api.anthropic.com"
MESSAGES_PATH = "/v1/messages"
VERSION = "2023-06-01"
OAUTH_PREFIX = "sk-ant-oat"
OAUTH_BETA = "oauth-2025-04-20"
DEFAULT_MAX_TOKENS = 4096  # litellm's DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS / DEFAULT_MAX_TOKENS
DUMMY_TOOL: dict[str, Any] = {
    "name": "dummy_tool",
    "input_schema": {"type": "object", "properties": {}},
    "type": "custom",
    "description": "This is a dummy tool call",
}
# The request fields the lean path translates; any other in ``ChatRequest.extra`` sends it to litellm.
SERVED_EXTRA = frozenset({"extra_headers", "top_p", "top_k", "stop", "thinking"})
_SCHEMA_KEYS = ("type", "properties", "additionalProperties", "required", "$defs", "strict")
_INVALID_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class MessagesEndpoint:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    timeout: float = 600
    missing_key: str | None = None  # the variable to set when no API key was found
    tool_names: dict[str, str] = field(default_factory=dict)  # name sent → the tool's own name


def model_id(model: str) -> str | None:
    """The Anthropic model id of a litellm model string this path serves, else None."""
    prefix, _, rest = model.partition("/")
    if rest:
        return rest if prefix == "anthropic" and "/" not in rest else None
    info = modelmap.entry(model)
    provider = info.get("litellm_provider") if info else modelmap.routed_provider(model)
    return model if provider == "anthropic" else None


def endpoint(req: ChatRequest, env: Mapping[str, str] = os.environ) -> MessagesEndpoint | None:
    """The HTTP request for ``req`` on the lean path, or None: litellm serves it."""
    name = model_id(req.model)
    if name is None or not set(req.extra) <= SERVED_EXTRA:
        return None
    info = capabilities(name)
    if "thinking" in req.extra and not _thinking_as_given(req.extra["thinking"], info):
        return None  # litellm rewrites thinking per model there (adaptive, effort)
    names = tool_name_map([t.get("function", {}).get("name") for t in req.tools or () if isinstance(t, dict)])
    try:
        body = _body(req, name, info, names)
    except wire.Unsupported:
        return None
    url, key, auth = _url(req, env), _key(req, env), _auth_token(env)
    headers = {str(k): str(v) for k, v in (req.extra.get("extra_headers") or {}).items()}
    headers.update(
        {"anthropic-version": VERSION, "accept": "application/json", "content-type": "application/json"}
    )
    betas = [b.strip() for b in headers.pop("anthropic-beta", "").split(",") if b.strip()]
    if key and key.startswith(OAUTH_PREFIX):
        headers.update(
            {"authorization": f"Bearer {key}", "anthropic-dangerous-direct-browser-access": "true"}
        )
        betas.append(OAUTH_BETA)
    elif key:
        headers["x-api-key"] = key
    elif auth:
        headers["authorization"] = f"Bearer {auth}"
    if betas:
        headers["anthropic-beta"] = ",".join(dict.fromkeys(betas))
    default_host = url.startswith(DEFAULT_BASE)
    return MessagesEndpoint(
        url=url,
        headers=headers,
        body=body,
        timeout=req.timeout,
        missing_key="ANTHROPIC_API_KEY" if not (key or auth) and default_host else None,
        tool_names={sent: own for own, sent in names.items()},
    )


def _thinking_as_given(thinking: Any, info: Mapping[str, Any]) -> bool:
    """Whether litellm sends this ``thinking`` unchanged: budgeted thinking on a model that takes it."""
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return False  # adaptive on an older model, disabled: litellm translates or drops them
    return not (info.get("supports_adaptive_thinking") or info.get("thinking_always_on"))


def capabilities(name: str) -> dict[str, Any]:
    """The model map's entry for an Anthropic model id, or litellm's generalisation for an unlisted one."""
    return modelmap.entry(name) or modelmap.entry(f"anthropic/{name}") or modelmap.generalized(name)


def tool_name_map(names: list[Any]) -> dict[str, str]:
    """Tool names Anthropic would reject (``^[a-zA-Z0-9_-]{1,128}$``) → the names sent instead, unique
    in the request, as litellm's ``_build_anthropic_tool_name_maps`` picks them."""
    valid = [n for n in names if isinstance(n, str) and n and _clean(n) == n]
    used, forward = set(valid), {}
    for original in names:
        if (
            not isinstance(original, str)
            or not original
            or original in forward
            or _clean(original) == original
        ):
            continue
        candidate = unique = _clean(original)
        n = 1
        while unique in used:
            n += 1
            unique = f"{candidate[: 128 - len(str(n)) - 1]}_{n}"
        forward[original] = unique
        used.add(unique)
    return forward


def _clean(name: str) -> str:
    return _INVALID_NAME.sub("_", name)[:128]


def _body(req: ChatRequest, name: str, info: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    messages = cache.mark(req.messages)
    system, rest = wire.split_system(messages)
    rest = wire.place_later_system(rest, bool(info.get("supports_mid_conversation_system")))
    body: dict[str, Any] = {"model": name, "messages": wire.convert(rest, names)}
    extra = req.extra
    thinking = extra.get("thinking")
    thinking_on = isinstance(thinking, dict) and thinking.get("type") == "enabled"
    sampling = info.get("supports_sampling_params") is not False
    if req.temperature is not None and (sampling or req.temperature == 1) and not thinking_on:
        body["temperature"] = req.temperature
    if extra.get("top_p") is not None and sampling:
        body["top_p"] = extra["top_p"]
    stop = extra.get("stop")
    if isinstance(stop, str | list) and stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    body["max_tokens"] = _max_tokens(req, name, thinking)
    if req.tools:
        body["tools"] = [_tool(t, names) for t in req.tools]
    elif wire.has_tool_blocks(rest):
        body["tools"] = [DUMMY_TOOL]  # Anthropic wants tools declared when the history has tool blocks
    if thinking is not None:
        body["thinking"] = thinking
    if extra.get("top_k") is not None and sampling:
        body["top_k"] = extra["top_k"]
    if system:
        body["system"] = system
    body["stream"] = True
    return body


def _max_tokens(req: ChatRequest, name: str, thinking: Any) -> int:
    if req.max_tokens is not None:
        return req.max_tokens
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    if isinstance(budget, int) and thinking.get("type") == "enabled":
        return budget + int(os.environ.get("DEFAULT_MAX_TOKENS", DEFAULT_MAX_TOKENS))
    info = modelmap.entry(name) or {}  # litellm looks the exact id up, without generalising
    known = info.get("max_output_tokens") or info.get("max_tokens")
    return (
        int(known) if known else int(os.environ.get("DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS", DEFAULT_MAX_TOKENS))
    )


def _tool(tool: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    if tool.get("type") not in ("function", "custom"):
        raise wire.Unsupported(f"a {tool.get('type')!r} tool")
    function = tool.get("function") or {}
    schema = dict(function.get("parameters") or {"type": "object", "properties": {}})
    if "definitions" in schema or "components" in schema:
        raise wire.Unsupported("a tool schema with legacy definitions")  # litellm inlines those
    schema["type"] = "object"
    schema.setdefault("properties", {})
    name = function.get("name")
    out: dict[str, Any] = {
        "name": names.get(name, name) if isinstance(name, str) else name,
        "input_schema": {k: schema[k] for k in _SCHEMA_KEYS if k in schema},
        "type": "custom",
    }
    if function.get("description") is not None:
        out["description"] = function["description"]
    cache_control = tool.get("cache_control") or function.get("cache_control")
    if isinstance(cache_control, dict):
        out["cache_control"] = cache_control
    return out


def _url(req: ChatRequest, env: Mapping[str, str]) -> str:
    base = (
        req.api_base or env.get("ANTHROPIC_API_BASE") or env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE
    ).rstrip("/")
    if base.endswith(MESSAGES_PATH) or env.get("LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX", "").lower() == "true":
        return base
    if base.endswith("/v1"):
        return base + "/messages"
    return base + MESSAGES_PATH


def _key(req: ChatRequest, env: Mapping[str, str]) -> str | None:
    for value in (req.api_key, env.get("ANTHROPIC_API_KEY")):
        if value and value.strip():
            return value.strip()
    return None


def _auth_token(env: Mapping[str, str]) -> str | None:
    value = env.get("ANTHROPIC_AUTH_TOKEN")
    return value.strip() if value and value.strip() else None
