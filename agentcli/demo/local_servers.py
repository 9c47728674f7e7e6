"""The scripted server speaking as a local model server does about its context window: the endpoint
where each one says it, and what each one does with a prompt longer than it (the real texts).

``LocalServer(shape, window)`` on ``FakeLLM.local``:

- ``vllm``: ``GET /v1/models`` with ``max_model_len``; an over-long prompt gets vLLM's 400.
- ``llamacpp``: ``GET /props`` with ``default_generation_settings.n_ctx`` (``/v1/models`` carries the
  trained ``n_ctx_train``, four times larger, which must not be taken); llama.cpp's
  ``exceed_context_size_error``.
- ``lmstudio``: ``GET /api/v0/models`` with ``loaded_context_length`` (and the larger
  ``max_context_length``); LM Studio's "Trying to keep the first N tokens when context the overflows".
- ``ollama``: ``GET /api/ps`` (nothing loaded) and ``POST /api/show`` with ``num_ctx`` in
  ``parameters`` (and the trained ``llama.context_length``); an over-long prompt is cut silently: the
  reply's usage counts ``window`` prompt tokens.
- ``litellm``: ``GET /model/info`` with ``model_info.max_input_tokens``; litellm's overflow words.
- ``error-only``: says nothing about its window but in its overflow error (OpenAI's words).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

TRAINED = 4  # the model's trained window, as a multiple of the served one (never the answer)


@dataclass
class LocalServer:
    shape: str
    window: int
    model: str = "test-model"
    cuts_at: int = 0  # Ollama: where it really cuts, when it says another num_ctx (0: at ``window``)
    prompts: list[int] = field(default_factory=list)  # the size of every chat request received
    overflows: int = 0

    @staticmethod
    def size(body: dict[str, Any]) -> int:
        """A request's prompt tokens as this server counts them (4 characters a token, tools too)."""
        return max(1, len(json.dumps([body.get("messages", []), body.get("tools") or []])) // 4)

    def get(self, path: str) -> tuple[int, Any] | None:
        """The answer to a discovery GET; None: not this server's endpoint (404)."""
        path = path.split("?")[0].rstrip("/")
        row: dict[str, Any] = {"id": self.model, "object": "model", "owned_by": self.shape}
        if path.endswith("/v1/models") or path == "/models":
            if self.shape == "vllm":
                row["max_model_len"] = self.window
            if self.shape == "llamacpp":
                row["meta"] = {"n_ctx_train": self.window * TRAINED}
            return 200, {"object": "list", "data": [row]}
        if self.shape == "llamacpp" and path == "/props":
            return 200, {"default_generation_settings": {"n_ctx": self.window}, "total_slots": 1}
        if self.shape == "lmstudio" and path.startswith("/api/v0/models"):
            row.update(
                state="loaded",
                loaded_context_length=self.window,
                max_context_length=self.window * TRAINED,
            )
            return 200, row if path != "/api/v0/models" else {"object": "list", "data": [row]}
        if self.shape == "ollama" and path == "/api/ps":
            return 200, {"models": []}
        if self.shape == "litellm" and path.endswith("/model/info"):
            info = {"max_input_tokens": self.window, "max_output_tokens": 4096}
            return 200, {"data": [{"model_name": self.model, "model_info": info}]}
        return None

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        if self.shape == "ollama" and path.rstrip("/") == "/api/show":
            return 200, {
                "parameters": f'num_ctx                        {self.window}\nstop "<|im_end|>"',
                "model_info": {
                    "general.architecture": "llama",
                    "llama.context_length": self.window * TRAINED,
                },
            }
        return None

    def overflow(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        """The error this server answers a chat request longer than its window with (None: it fits,
        or this server cuts it silently)."""
        sent = self.size(body)
        self.prompts.append(sent)
        if sent <= self.window or self.shape == "ollama":
            return None
        self.overflows += 1
        n, m = self.window, sent
        if self.shape == "llamacpp":
            message = (
                f"request ({m} tokens) exceeds the available context size ({n} tokens), try increasing it"
            )
            return 400, {
                "error": {
                    "code": 400,
                    "message": message,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": m,
                    "n_ctx": n,
                }
            }
        if self.shape == "lmstudio":
            return 400, {
                "error": f"Trying to keep the first {m} tokens when context the overflows. However, the "
                f"model is loaded with context length of only {n} tokens, which is not enough. Try to load "
                "the model with a larger context length, or provide a shorter input"
            }
        if self.shape == "vllm":
            return 400, {
                "object": "error",
                "message": f"This model's maximum context length is {n} tokens. However, you requested {m} "
                f"tokens ({m} in the messages, 0 in the completion). Please reduce the length of the "
                "messages or completion.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        words = (
            f"This model's maximum context length is {n} tokens. "
            f"However, your messages resulted in {m} tokens."
        )
        if self.shape == "litellm":
            words = f"litellm.ContextWindowExceededError: litellm.BadRequestError: {words}"
        return 400, {
            "error": {"message": words, "type": "invalid_request_error", "code": "context_length_exceeded"}
        }

    def cut(self, body: dict[str, Any]) -> int | None:
        """Ollama: the prompt tokens it reports, those of a prompt it cut to its window when it was
        longer (None: another server, whose usage is the script's)."""
        if self.shape == "ollama" and self.prompts:
            return min(self.prompts[-1], self.cuts_at or self.window)
        return None
