"""One error type for everything that can go wrong talking to a model, and when to retry.

``classify`` turns litellm's exceptions (recognised by class name, so this module never imports
litellm) into an ``LLMError`` with a kind the session loop acts on. Context overflow follows
OpenCode's rules (reference §6): the provider message patterns, a bare "400/413 (no body)", HTTP
413, or a body whose ``error.code`` is ``context_length_exceeded``; a 429 is never an overflow.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import time
from typing import Any, Literal

from agentcli.llm.overflow_window import from_error

Kind = Literal[
    "auth",
    "rate_limit",
    "context_overflow",
    "provider_down",
    "bad_request",
    "not_found",
    "aborted",
    "unknown",
]

_RETRYABLE_KINDS = {"rate_limit", "provider_down"}

# OpenCode's overflow patterns (adapted from pi-mono), one per provider family.
_OVERFLOW_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt is too long",  # Anthropic
        r"input is too long for requested model",  # Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter / DeepSeek / vLLM
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp
        r"exceed_context_size_error",  # llama.cpp's error type
        r"greater than the context length",  # LM Studio
        r"context length of only \d+ tokens",  # LM Studio ("Trying to keep the first N tokens …")
        r"n_keep\W{0,3}\d+\W{0,6}n_ctx",  # LM Studio: "Cannot truncate prompt with n_keep (N) >= n_ctx (M)"
        r"context the overflows",  # LM Studio's words, verbatim
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi / Moonshot
        r"context[_ ]length[_ ]exceeded",  # generic
        r"request entity too large",  # HTTP 413
        r"context length is only \d+ tokens",  # vLLM
        r"input length.*exceeds.*context length",  # vLLM
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai
        r"^4(00|13)\s*(status code)?\s*\(no body\)",  # bare 400/413 from some gateways
    )
]

# A missing key shows up under several classes (OpenAI: InternalServerError, Gemini: APIConnectionError).
_MISSING_KEY = re.compile(
    r"missing .*(api[_ ]?key|credentials)|no api key"
    r"|api[_ ]key (is )?(not set|missing|required)|incorrect api key",
    re.IGNORECASE,
)
_NO_PROVIDER = re.compile(r"LLM Provider NOT provided", re.IGNORECASE)
# litellm wraps provider messages in class-name prefixes ("litellm.BadRequestError: OpenAIException - ").
_NOISE_PREFIX = re.compile(r"^\s*(litellm\.)?[A-Za-z]*(Error|Exception|Timeout)\s*(:|-)\s*")
_OPENAI_ERROR_BODY = re.compile(r"^Error code: \d+ - (?P<body>.+)$", re.DOTALL)

_HEADINGS: dict[str, str] = {
    "auth": "authentication failed",
    "rate_limit": "rate limited",
    "context_overflow": "context window exceeded",
    "provider_down": "provider unavailable",
    "bad_request": "request rejected",
    "not_found": "not found",
    "aborted": "aborted",
    "unknown": "LLM request failed",
}

MAX_RETRY_AFTER = 300.0  # a provider asking us to wait longer than this gets its error shown instead
BACKOFF_INITIAL = 2.0
BACKOFF_FACTOR = 2.0
BACKOFF_MAX = 30.0


class LLMError(Exception):
    """A classified model failure; ``str(err)`` is the one-line message for the user."""

    def __init__(
        self,
        kind: Kind,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        response_body: str | None = None,
        retries: int | None = None,
        window: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.message = message
        self.status = status
        self.retryable = kind in _RETRYABLE_KINDS if retryable is None else retryable
        self.retry_after = retry_after
        self.response_body = response_body
        self.retries = retries  # the most retries this failure deserves (None: the caller's default)
        self.window = window  # an overflow's error named the model's context window (tokens)

    def __repr__(self) -> str:
        return f"LLMError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


class ProviderHTTPError(Exception):
    """An error answer from the provider on the lean path, carrying what ``classify`` reads from
    litellm's exceptions: ``status_code``, the parsed ``body`` and the response ``headers``."""

    def __init__(self, status: int | None, body: dict[str, Any] | str, headers: Any = None) -> None:
        self.status_code = status
        self.body = body
        self.headers = headers
        self.message = body if isinstance(body, str) else f"Error code: {status} - {json.dumps(body)}"
        super().__init__(self.message)


def is_overflow_message(text: str) -> bool:
    """Whether a provider's error message says the input does not fit the context window."""
    return any(p.search(text) for p in _OVERFLOW_PATTERNS)


def classify(exc: BaseException, model: str | None = None) -> LLMError:
    """Turn any exception from a model call into an ``LLMError`` (never raises)."""
    if isinstance(exc, LLMError):
        return exc
    try:
        return _classify(exc, model)
    except Exception:  # noqa: BLE001 - classification must never hide the original failure
        return LLMError("unknown", f"{_HEADINGS['unknown']}: {_first_line(str(exc)) or type(exc).__name__}")


def retry_delay(err: LLMError, attempt: int) -> float | None:
    """Seconds to wait before retry number ``attempt`` (1-based), or None: do not retry.

    Exponential backoff (2 s, 4 s, 8 s … capped at 30 s); a provider's retry-after wins when given.
    Overflow, auth and bad requests are never retried: repeating them cannot help.
    """
    if not err.retryable or err.kind in ("context_overflow", "auth", "bad_request", "not_found", "aborted"):
        return None
    if err.retries is not None and attempt > err.retries:
        return None
    if err.retry_after is not None:
        return None if err.retry_after > MAX_RETRY_AFTER else max(0.0, err.retry_after)
    return min(BACKOFF_MAX, BACKOFF_INITIAL * BACKOFF_FACTOR ** max(0, attempt - 1))


# -- internals -------------------------------------------------------------------------------


@dataclass
class _Facts:
    """What an exception says, read once: the class names along its chain, the HTTP status, the
    provider's body and words, and whether it ever got an HTTP answer."""

    exc: BaseException
    names: set[str]
    status: int | None
    body: dict[str, Any] | str | None
    code: str | None
    detail: str
    retry_after: float | None
    timed_out: bool
    transport: bool

    @classmethod
    def of(cls, exc: BaseException) -> _Facts:
        body = _body(exc)
        timed_out = is_timeout(exc)
        transport = timed_out or _is_transport_failure(exc)
        return cls(
            exc=exc,
            names=_class_names(exc),
            # litellm reports 500/408 for failures that never got an HTTP answer
            status=None if transport else _status(exc, body),
            body=body,
            code=_body_code(body),
            detail=_detail(exc, body),
            retry_after=_retry_after(exc),
            timed_out=timed_out,
            transport=transport,
        )

    def make(
        self, kind: Kind, retryable: bool | None = None, text: str | None = None, retries: int | None = None
    ) -> LLMError:
        shown = text or self.detail
        where = f" (HTTP {self.status})" if self.status else ""
        body = self.body
        return LLMError(
            kind,
            f"{_HEADINGS[kind]}{where}: {shown}" if shown else f"{_HEADINGS[kind]}{where}",
            status=self.status,
            retryable=retryable,
            retry_after=self.retry_after,
            response_body=json.dumps(body) if isinstance(body, dict) else (body or None),
            retries=retries,
        )


def _classify(exc: BaseException, model: str | None) -> LLMError:
    facts = _Facts.of(exc)
    if _NO_PROVIDER.search(str(exc)):
        facts.status = None  # raised by litellm before any request was sent
        name = model or getattr(exc, "model", None) or "?"
        return facts.make(
            "bad_request",
            False,
            f"unknown model '{name}': litellm cannot tell its provider; write it as provider/model "
            "(for example openai/gpt-4o or anthropic/claude-sonnet-4-20250514)",
        )
    for rule in (_as_overflow, _as_auth, _as_rate_limit_or_missing, _as_transport, _as_server, _as_request):
        found = rule(facts)
        if found is not None:
            return found
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return facts.make("provider_down", True)
    return facts.make("unknown", False, facts.detail or type(exc).__name__)


def _as_overflow(f: _Facts) -> LLMError | None:
    # The text OpenCode's rules look at; an empty 400/413 is written the way the AI SDK says it.
    text = f.detail or (f"{f.status} status code (no body)" if f.status in (400, 413) else "")
    if f.status != 429 and (
        "ContextWindowExceededError" in f.names
        or f.status == 413
        or f.code == "context_length_exceeded"
        or is_overflow_message(text)
    ):
        err = f.make("context_overflow", False)
        err.window = from_error(f.detail, f.body)
        return err
    return None


def _as_auth(f: _Facts) -> LLMError | None:
    if _MISSING_KEY.search(str(f.exc)):
        if f.status not in (401, 403):
            f.status = None  # a client-side check; litellm labels some of them HTTP 500
        return f.make("auth", False)
    if f.status in (401, 403) or f.names & {"AuthenticationError", "PermissionDeniedError"}:
        return f.make("auth", False)
    return None


def _as_rate_limit_or_missing(f: _Facts) -> LLMError | None:
    if f.code == "insufficient_quota":
        return f.make("rate_limit", False, "quota exceeded; check your plan and billing details")
    if f.status == 429 or "RateLimitError" in f.names:
        return f.make("rate_limit", True)
    if f.status == 404 or "NotFoundError" in f.names:
        return f.make("not_found", False)
    return None


def _as_transport(f: _Facts) -> LLMError | None:
    """No HTTP answer at all. A refused connection or an unknown host will not be different in a few
    seconds (the server is not running, the name is wrong or the machine is offline): said at once,
    naming the host, never retried. A timeout may be load: retried once."""
    if not f.transport:
        return None
    where = _host(f.exc)
    if f.timed_out:
        return f.make("provider_down", True, f"request to {where or 'the provider'} timed out", retries=1)
    reason = _connect_reason(f.exc)
    if where and reason:
        return f.make("provider_down", False, f"cannot connect to {where}: {reason}", retries=0)
    return f.make("provider_down", True, f"cannot reach {where or 'the provider'} ({f.detail})", retries=1)


def _as_server(f: _Facts) -> LLMError | None:
    if f.code in ("server_error", "server_is_overloaded") or (f.status is not None and f.status >= 500):
        return f.make("provider_down", True)
    if f.names & {
        "ServiceUnavailableError",
        "InternalServerError",
        "APIConnectionError",
        "MidStreamFallbackError",
    } and not (f.status is not None and 400 <= f.status < 500):
        return f.make("provider_down", True)
    return None


def _as_request(f: _Facts) -> LLMError | None:
    if f.status in (400, 409, 422) or f.names & {
        "BadRequestError",
        "UnprocessableEntityError",
        "ContentPolicyViolationError",
    }:
        return f.make("bad_request", False)
    if f.status is not None and 400 <= f.status < 500:
        return f.make("bad_request", False)
    return None


def _host(exc: BaseException) -> str | None:
    """``host:port`` of the request that failed, from the deepest exception that keeps one (httpx's
    own; litellm's wrappers carry a made-up request to api.openai.com)."""
    found = None
    for e in _chain(exc):
        request = getattr(e, "_request", None) or getattr(e, "request", None)
        url = getattr(request, "url", None)
        host = getattr(url, "host", None)
        if host:
            port = getattr(url, "port", None)
            found = f"{host}:{port}" if port else str(host)
    return found


_DNS_FAILURES = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "no address associated",
)


def _connect_reason(exc: BaseException) -> str | None:
    """Why a connection could not be made, when it is one that waiting will not fix."""
    for e in _chain(exc):
        names = _class_names(e)
        text = str(e).lower()
        if "ConnectionRefusedError" in names or "connection refused" in text:
            return "connection refused (is the server running?)"
        if "gaierror" in names or any(words in text for words in _DNS_FAILURES):
            return "the host name does not resolve (DNS lookup failed; offline?)"
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 12:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def is_timeout(exc: BaseException) -> bool:
    """The client gave up waiting (the request's timeout), on either path."""
    markers = {"Timeout", "APITimeoutError", "TimeoutException", "ReadTimeout"}
    return any(_class_names(e) & markers for e in _chain(exc))


def is_cut(exc: BaseException) -> bool:
    """The connection broke in the middle of the response (whatever status litellm puts on it)."""
    markers = {"RemoteProtocolError", "ReadError", "IncompleteRead", "ChunkedEncodingError"}
    return any(_class_names(e) & markers for e in _chain(exc)) or "peer closed connection" in str(exc)


def _is_transport_failure(exc: BaseException) -> bool:
    """The request never got an HTTP answer (refused, DNS, reset before headers)."""
    markers = {"ConnectError", "ConnectionRefusedError", "ConnectTimeout", "gaierror"}
    if any(_class_names(e) & markers for e in _chain(exc)):
        return True
    # openai's APIConnectionError under litellm's InternalServerError: no response behind it.
    return any(
        type(e).__name__ == "APIConnectionError" and type(e).__module__.startswith("openai")
        for e in _chain(exc)
    )


def _status(exc: BaseException, body: dict[str, Any] | str | None = None) -> int | None:
    for e in _chain(exc):
        value = getattr(e, "status_code", None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    # An error event mid-stream names its status in the body (Groq: error.status_code).
    inner = body.get("error") if isinstance(body, dict) else None
    for source in (inner, body):
        value = source.get("status_code") if isinstance(source, dict) else None
        if isinstance(value, int) and 400 <= value < 600:
            return value
    return None


def _body(exc: BaseException) -> dict[str, Any] | str | None:
    """The provider's error body, as far as litellm kept it (on the exception or one it wraps: litellm
    can fail while wrapping a mid-stream error, and the provider's words are then only on the cause)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) or (isinstance(body, str) and body):
        return body
    for e in _chain(exc):
        inner = getattr(e, "body", None)
        if isinstance(inner, dict) and (inner.get("message") or inner.get("error")):
            return inner
    # litellm drops the body on some classes; the wrapped openai error still carries it in its message.
    for e in _chain(exc):
        match = _OPENAI_ERROR_BODY.match(str(getattr(e, "message", "") or e))
        if match:
            return _parse_body(match.group("body"))
    return body if isinstance(body, str) else None


def _parse_body(text: str) -> dict[str, Any] | str:
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return text


def _body_code(body: dict[str, Any] | str | None) -> str | None:
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    code = inner.get("code") if isinstance(inner, dict) else body.get("code")
    return str(code) if code else None


def _detail(exc: BaseException, body: dict[str, Any] | str | None) -> str:
    """The provider's own words, without litellm's class-name prefixes, on one line."""
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message.strip():
            return _first_line(message)
    text = str(getattr(exc, "message", "") or exc)
    text = text.split(" Original exception:")[0]
    previous = None
    while previous != text:
        previous, text = text, _NOISE_PREFIX.sub("", text, count=1)
    text = _first_line(text)
    return "" if re.fullmatch(r"Error code: \d+", text) else text


def _first_line(text: str, limit: int = 300) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _retry_after(exc: BaseException) -> float | None:
    for e in _chain(exc):
        for attr in ("litellm_response_headers", "headers"):
            found = _retry_after_from(getattr(e, attr, None))
            if found is not None:
                return found
        response = getattr(e, "response", None)
        found = _retry_after_from(getattr(response, "headers", None))
        if found is not None:
            return found
    return None


def _retry_after_from(headers: Any) -> float | None:
    if not headers or not hasattr(headers, "get"):
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError, IndexError):
        return None
