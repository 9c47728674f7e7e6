"""A local server's context window, asked of the server itself, or read off its overflow error.

Each server says the window it was *started with* in its own place (the trained size is no use: a
llama.cpp server started with ``-c 8192`` rejects a 9k prompt whatever the model was trained on):

- vLLM: ``GET /v1/models`` → ``data[].max_model_len``
- llama.cpp server: ``GET /props`` → ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``)
- LM Studio: ``GET /api/v0/models/{id}`` → ``loaded_context_length`` (the model as loaded)
- Ollama: ``GET /api/ps`` → ``models[].context_length`` of the loaded model, else
  ``POST /api/show`` → ``num_ctx`` in ``parameters``, else Ollama's default (``OLLAMA_CONTEXT_LENGTH``
  when set here, else 4,096: the smallest of the defaults Ollama picks by VRAM). Never the model's
  trained ``<arch>.context_length``: Ollama truncates the prompt to ``num_ctx`` silently.
- LiteLLM proxy: ``GET /model/info`` → ``data[].model_info.max_input_tokens`` (or ``max_tokens``)

The probes run in that order and the first answer wins; a server answers the others with a 404 in a
millisecond. Never raises: a server that says nothing gives None.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import httpx

from agentcli.llm.delta import num

OLLAMA_DEFAULT = 4096


@dataclass(frozen=True)
class Window:
    tokens: int
    source: str  # who said it, for the user: "the llama.cpp server", "the overflow error", …


def discover(api_base: str, model: str, api_key: str | None = None, timeout: float = 3.0) -> Window | None:
    """Ask the server at ``api_base`` (an OpenAI-compatible base URL, ``…/v1``) for ``model``'s window."""
    base = api_base.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    client = _Client(api_key, timeout)
    try:
        for probe in (_vllm, _llamacpp, _lmstudio, _ollama, _litellm):
            found = probe(client, base, root, model)
            if found is not None and found.tokens > 0:
                return found
    except (httpx.HTTPError, OSError, ValueError):
        return None
    return None


def server_models(api_base: str, api_key: str | None = None, timeout: float = 3.0) -> list[str] | None:
    """The model ids the server at ``api_base`` lists (``GET /models``); None when it says nothing."""
    try:
        data = _json(_Client(api_key, timeout).get(api_base.rstrip("/") + "/models"))
    except (httpx.HTTPError, OSError, ValueError):
        return None
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return None
    return [str(row["id"]) for row in rows if isinstance(row, dict) and row.get("id")]


# -- the probes ------------------------------------------------------------------------------


class _Client:
    """The lean path's connection pool (its TLS setup is paid once per process; the turn's first
    request then reuses the connection), with this server's key and a short timeout."""

    def __init__(self, api_key: str | None, timeout: float) -> None:
        from agentcli.llm.lean_path import client

        self.pool = client()
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout

    def get(self, url: str) -> httpx.Response:
        return self.pool.get(url, headers=self.headers, timeout=self.timeout)

    def post(self, url: str, json: Any) -> httpx.Response:
        return self.pool.post(url, json=json, headers=self.headers, timeout=self.timeout)


def _vllm(client: _Client, base: str, root: str, model: str) -> Window | None:
    data = _json(client.get(base + "/models"))
    for row in _rows(data, "data"):
        if row.get("id") == model and num(row.get("max_model_len")):
            return Window(num(row.get("max_model_len")), "the vLLM server")
    return None


def _llamacpp(client: _Client, base: str, root: str, model: str) -> Window | None:
    data = _json(client.get(root + "/props"))
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    n_ctx = num(settings.get("n_ctx")) if isinstance(settings, dict) else 0
    n_ctx = n_ctx or num(data.get("n_ctx"))
    return Window(n_ctx, "the llama.cpp server") if n_ctx else None


def _lmstudio(client: _Client, base: str, root: str, model: str) -> Window | None:
    data = _json(client.get(f"{root}/api/v0/models/{model}"))
    rows = [data] if isinstance(data, dict) and data.get("id") else list(_rows(data, "data"))
    for row in rows:
        if row.get("id") == model and num(row.get("loaded_context_length")):
            return Window(num(row["loaded_context_length"]), "LM Studio (the model as loaded)")
    return None


def _ollama(client: _Client, base: str, root: str, model: str) -> Window | None:
    running = _json(client.get(root + "/api/ps"))
    for row in _rows(running, "models"):
        if model in (row.get("name"), row.get("model")) and num(row.get("context_length")):
            return Window(num(row["context_length"]), "Ollama (the loaded model's num_ctx)")
    shown = _json(client.post(root + "/api/show", json={"model": model}))
    if not isinstance(shown, dict) or not ("parameters" in shown or "model_info" in shown):
        return None
    match = re.search(r"^\s*num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
    if match:
        return Window(int(match.group(1)), "Ollama (the model's num_ctx)")
    env = num(os.environ.get("OLLAMA_CONTEXT_LENGTH"))
    if env:
        return Window(env, "Ollama (OLLAMA_CONTEXT_LENGTH)")
    return Window(OLLAMA_DEFAULT, "Ollama (its default num_ctx)")


def _litellm(client: _Client, base: str, root: str, model: str) -> Window | None:
    for url in {root + "/model/info", base + "/model/info"}:
        for row in _rows(_json(client.get(url)), "data"):
            found = row.get("model_info")
            info: dict[str, Any] = found if isinstance(found, dict) else {}
            if row.get("model_name") == model:
                tokens = num(info.get("max_input_tokens")) or num(info.get("max_tokens"))
                if tokens:
                    return Window(tokens, "the LiteLLM proxy")
    return None


def _json(response: httpx.Response) -> Any:
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _rows(data: Any, key: str) -> list[dict[str, Any]]:
    rows = data.get(key) if isinstance(data, dict) else None
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []
