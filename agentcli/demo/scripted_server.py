"""A scripted OpenAI-compatible chat-completions server: the model of ``agentcli demo`` and of the tests.

It ships in the package so the demo runs with no key and no network; ``tests/fakellm.py`` re-exports it.

A real HTTP server on 127.0.0.1 (random free port, background thread). Each test pushes the
responses it wants, in order; every request is recorded so the test can check what was sent.

In-process use::

    with FakeLLM() as server:
        server.push(Reply(text="hello"), Reply(tool_calls=[ToolCall("bash", {"command": "ls"})]))
        ... point the client at server.base_url ...
        assert server.chat_requests()[0].body["messages"][-1]["content"] == "hi"

Responses (consumed first-in first-out by ``POST /v1/chat/completions``, and by Anthropic's
``POST /v1/messages``, which streams them as Anthropic does: see ``anthropic_wire``):

- ``Reply``: streamed like OpenAI (role chunk, reasoning in ``reasoning_content`` deltas, text in
  ``content`` deltas, each tool call split over several ``tool_calls`` deltas, a ``finish_reason``
  chunk, a usage chunk with ``choices: []`` when the request asked for ``stream_options.include_usage``,
  then ``data: [DONE]``), or one JSON object when the request had ``stream: false``.
- ``ErrorResponse``: an HTTP error with a JSON (or text) body; presets ``context_length()``,
  ``unauthorized()``, ``rate_limited()``, ``server_error()``, ``too_large()``.
- ``Hang``: accept the request and send nothing for that many seconds, then drop the connection.

Persistent rules (``server.on(predicate, factory)``) answer matching requests without consuming the
queue. One is built in: a request whose system message contains "title generator" gets a short
title reply (``server.title``), so background title requests never steal scripted replies.
When the queue is empty the server answers HTTP 500 naming "fakellm: no scripted response left"
(or the ``fallback`` response, when one is set).

Standalone (for tests that run agentcli in a subprocess)::

    python -m agentcli.demo.scripted_server --port 0 --script script.json [--record requests.jsonl]

prints its base URL (``http://127.0.0.1:PORT/v1``) on the first line of stdout, then serves until
killed. ``--record`` appends every request as one JSON line ``{"path", "headers", "body", "title"}``.
The script is a JSON list of responses, or an object
``{"responses": [...], "title": "Scripted title", "fallback": <response>}``. A response is one of::

    {"type": "reply", "text": "hi", "reasoning": "", "finish_reason": null, "chunk_size": 8,
     "delay": 0.0, "cut_after": null, "cut_clean": false, "stall": 0.0, "stream": null,
     "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}, "id": null}],
     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 0,
               "reasoning_tokens": 0, "cache_write_tokens": 0}}
    {"type": "error", "status": 500, "body": {"error": {"message": "boom"}}, "headers": {}}
    {"type": "error", "preset": "context_length"}   # or unauthorized, rate_limited, server_error, too_large
    {"type": "hang", "seconds": 30}

``"type"`` defaults to "reply"; every field but ``type`` is optional.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentcli.demo import anthropic_wire
from agentcli.demo.anthropic_wire import AnthropicReply

FAST_BATCH = 64  # SSE events per HTTP chunk when a reply streams without delays
FAST_CACHE_MIN = 1000  # replies at least this many events long are encoded once per server

NO_SCRIPT_MESSAGE = "fakellm: no scripted response left"


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    # Anthropic-style cache writes, as OpenAI-compatible proxies for Anthropic report them.
    cache_write_tokens: int = 0

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }
        if self.cache_write_tokens:
            out["cache_creation_input_tokens"] = self.cache_write_tokens
        return out


@dataclass
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    usage: Usage | None = None  # default: made up from the sizes of request and reply
    chunk_size: int = 8  # characters per content / reasoning / argument delta
    delay: float = 0.0  # seconds between chunks
    cut_after: int | None = None  # send this many chunks, then drop the connection without [DONE]
    cut_clean: bool = False  # with cut_after: end the HTTP response properly instead (a proxy cutting it)
    stall: float = 0.0  # with cut_after: stay connected and silent this many seconds first (a stalled stream)
    stream: bool | None = None  # None: follow the request's "stream" flag


@dataclass
class ErrorResponse:
    status: int
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def context_length(cls) -> ErrorResponse:
        return cls(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 9000 tokens.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
        )

    @classmethod
    def unauthorized(cls) -> ErrorResponse:
        return cls(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )

    @classmethod
    def rate_limited(cls, retry_after: float = 2) -> ErrorResponse:
        return cls(
            429,
            {
                "error": {
                    "message": "Rate limit reached for requests.",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
            {"retry-after": f"{retry_after:g}"},
        )

    @classmethod
    def server_error(cls) -> ErrorResponse:
        return cls(
            500,
            {
                "error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error",
                }
            },
        )

    @classmethod
    def too_large(cls) -> ErrorResponse:
        return cls(413, "Request Entity Too Large", {"content-type": "text/plain"})


@dataclass
class Hang:
    seconds: float


Response = Reply | ErrorResponse | Hang | AnthropicReply


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]  # keys lower-cased
    body: dict[str, Any]
    method: str = "POST"
    title: bool = False  # a session-title request (system message names the "title generator")
    outcome: str = "pending"  # complete | error | cut | hang | client_closed | unscripted


@dataclass
class Rule:
    predicate: Callable[[Recorded], bool]
    factory: Callable[[Recorded], Response]


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def is_chat_path(path: str) -> bool:
    """A chat request: OpenAI's chat completions, or Anthropic's Messages API (``anthropic_wire``)."""
    return path.rstrip("/").endswith(("/chat/completions", "/messages"))


def is_title_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    system = body.get("system")  # Anthropic's Messages API: the system prompt is top-level
    if system and "title generator" in _message_text({"content": system}).lower():
        return True
    return any(
        isinstance(m, dict) and m.get("role") == "system" and "title generator" in _message_text(m).lower()
        for m in messages
    )


class _Stop(Exception):
    """The client went away or the script says to drop the connection."""


class FakeLLM:
    def __init__(self, port: int = 0) -> None:
        self.title = "Scripted title"
        self.models = ["test-model"]
        self.fallback: Response | None = None
        self.requests: list[Recorded] = []
        self._queue: deque[Response] = deque()
        self._rules: list[Rule] = []
        self._cond = threading.Condition()
        self._encoded: dict[tuple[int, str, bool], list[bytes]] = {}  # fast mode's encoded large replies
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.title_rule = self.on(lambda r: r.title, lambda r: Reply(text=self.title))

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", self._port), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fakellm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging / delayed handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------
    def push(self, *responses: Response) -> None:
        with self._cond:
            self._queue.extend(responses)

    def pending(self) -> int:
        """How many scripted responses are still waiting to be sent."""
        with self._cond:
            return len(self._queue)

    def on(
        self, predicate: Callable[[Recorded], bool], factory: Callable[[Recorded], Response] | Response
    ) -> Rule:
        """Answer every matching request with ``factory(request)``; the newest rule wins."""
        make = factory if callable(factory) else (lambda _r, f=factory: f)
        rule = Rule(predicate, make)
        with self._cond:
            self._rules.insert(0, rule)
        return rule

    def off(self, rule: Rule) -> None:
        with self._cond:
            if rule in self._rules:
                self._rules.remove(rule)

    # -- inspection --------------------------------------------------------------------------
    def chat_requests(self) -> list[Recorded]:
        with self._cond:
            return [r for r in self.requests if is_chat_path(r.path) and not r.title]

    def wait_for(self, n: int, timeout: float = 10.0) -> list[Recorded]:
        """Block until at least ``n`` chat requests (titles excluded) arrived; return them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = [r for r in self.requests if is_chat_path(r.path) and not r.title]
                if len(got) >= n:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fakellm: expected {n} chat requests, got {len(got)} in {timeout}s")
                self._cond.wait(left)

    # -- used by the handler -----------------------------------------------------------------
    def _record(self, rec: Recorded) -> None:
        with self._cond:
            self.requests.append(rec)
            self._cond.notify_all()

    def _next_response(self, rec: Recorded) -> Response | None:
        with self._cond:
            rule = next((r for r in self._rules if r.predicate(rec)), None)
            if rule is None:
                return self._queue.popleft() if self._queue else self.fallback
        return rule.factory(rec)  # outside the lock: a factory may wait (tests that hold a turn open)

    def _sleep(self, seconds: float) -> bool:
        """Sleep, cut short when the server stops; True if it slept the whole time."""
        return not self._stopping.wait(seconds) if seconds > 0 else True

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled request, a reused connection closed) is routine here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def unused_port() -> int:
    """A local port nothing listens on (for "connection refused" tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the wire format -------------------------------------------------------------------------


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _default_usage(body: dict[str, Any], reply: Reply) -> Usage:
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    produced = len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_json()) for c in reply.tool_calls)
    return Usage(prompt_tokens=prompt, completion_tokens=max(1, produced // 4))


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def stream_chunks(server: FakeLLM, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """The SSE data objects of one streamed reply, in order (without the final [DONE])."""
    base = {
        "id": server._new_id("chatcmpl-fake"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "test-model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in _pieces(reply.reasoning, reply.chunk_size)]
    out += [chunk({"content": p}) for p in _pieces(reply.text, reply.chunk_size)]
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id or server._new_id("call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [head]}))
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in _pieces(call.arguments_json(), reply.chunk_size)
        ]
    out.append(chunk({}, _finish_reason(reply)))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = reply.usage or _default_usage(body, reply)
        out.append({**base, "choices": [], "usage": usage.payload()})
    return out


def completion_object(server: FakeLLM, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The non-streaming JSON answer for one reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id or server._new_id("call_"),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for c in reply.tool_calls
        ]
    usage = reply.usage or _default_usage(body, reply)
    return {
        "id": server._new_id("chatcmpl-fake"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": usage.payload(),
    }


def _make_handler(server: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            rec = Recorded(self.path, self._headers(), {}, method="GET")
            server._record(rec)
            if self.path.rstrip("/").endswith("/models"):
                data = [
                    {"id": m, "object": "model", "created": 0, "owned_by": "fakellm"} for m in server.models
                ]
                self._send_json(200, {"object": "list", "data": data})
                rec.outcome = "complete"
            else:
                self._send_json(404, {"error": {"message": f"fakellm: no route {self.path}"}})
                rec.outcome = "error"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            rec = Recorded(self.path, self._headers(), body, title=is_title_request(body))
            if not is_chat_path(self.path):
                server._record(rec)
                rec.outcome = "error"
                self._send_json(404, {"error": {"message": f"fakellm: no route {self.path}"}})
                return
            response = server._next_response(rec)
            server._record(rec)
            try:
                self._answer(rec, body, response)
            except (_Stop, BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                if rec.outcome == "pending":
                    rec.outcome = "client_closed"

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _answer(self, rec: Recorded, body: dict[str, Any], response: Response | None) -> None:
            if response is None:
                rec.outcome = "unscripted"
                self._send_json(500, {"error": {"message": NO_SCRIPT_MESSAGE, "type": "fakellm_error"}})
            elif isinstance(response, ErrorResponse):
                rec.outcome = "error"
                if isinstance(response.body, str):
                    payload, ctype = response.body.encode(), "text/plain"
                else:
                    payload, ctype = json.dumps(response.body).encode(), "application/json"
                self._send(response.status, payload, {"content-type": ctype, **response.headers})
            elif isinstance(response, Hang):
                rec.outcome = "hang"
                server._sleep(response.seconds)
                self._drop()
            elif rec.path.rstrip("/").endswith("/messages"):
                anthropic_wire.serve(self, server, rec, body, response)
            elif isinstance(response, AnthropicReply):
                self._answer(rec, body, response.reply)
            elif (body.get("stream") is True) if response.stream is None else response.stream:
                self._stream(rec, body, response)
            else:
                rec.outcome = "complete"
                self._send_json(200, completion_object(server, body, response))

        def _stream(self, rec: Recorded, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            if reply.delay <= 0 and reply.cut_after is None:
                # Fast mode: many SSE events per write, so the server outpaces any client (benchmarks
                # stream 16,000 chunks); a client sees the same bytes in the same order. A large reply
                # served again (a benchmark's fallback) is encoded once.
                key = (
                    id(reply),
                    str(body.get("model")),
                    bool((body.get("stream_options") or {}).get("include_usage")),
                )
                frames = server._encoded.get(key)
                if frames is None:
                    frames = [
                        f"data: {json.dumps(data)}\n\n".encode()
                        for data in stream_chunks(server, body, reply)
                    ]
                    frames.append(b"data: [DONE]\n\n")
                    if len(frames) >= FAST_CACHE_MIN:
                        server._encoded[key] = frames
                for start in range(0, len(frames), FAST_BATCH):
                    self._write_chunk(b"".join(frames[start : start + FAST_BATCH]))
                self._write_chunk(b"")
                rec.outcome = "complete"
                return
            for n, data in enumerate(stream_chunks(server, body, reply)):
                if reply.cut_after is not None and n >= reply.cut_after:
                    rec.outcome = "cut"
                    if reply.stall > 0 and not server._sleep(reply.stall):
                        self._drop()
                    if reply.cut_clean:
                        self._write_chunk(b"")
                        return
                    self._drop()
                if n and not server._sleep(reply.delay):
                    self._drop()
                self._write_chunk(f"data: {json.dumps(data)}\n\n".encode())
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")  # the terminating zero-length chunk
            rec.outcome = "complete"

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _drop(self) -> None:
            """Close the socket abruptly (no terminating chunk, no [DONE])."""
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            raise _Stop

        def _send_json(self, status: int, obj: dict[str, Any]) -> None:
            self._send(status, json.dumps(obj).encode(), {"content-type": "application/json"})

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


# -- JSON scripts ----------------------------------------------------------------------------

_PRESETS: dict[str, Callable[[], ErrorResponse]] = {
    "context_length": ErrorResponse.context_length,
    "unauthorized": ErrorResponse.unauthorized,
    "rate_limited": ErrorResponse.rate_limited,
    "server_error": ErrorResponse.server_error,
    "too_large": ErrorResponse.too_large,
}


def response_from_json(obj: dict[str, Any]) -> Response:
    """One response from its JSON form (see the module docstring)."""
    kind = obj.get("type", "reply")
    fields = {k: v for k, v in obj.items() if k != "type"}
    if kind == "hang":
        return Hang(float(fields.get("seconds", 60)))
    if kind == "anthropic":
        return anthropic_wire.reply_from_json(fields, response_from_json)
    if kind == "error":
        if "preset" in fields:
            return _PRESETS[fields["preset"]]()
        return ErrorResponse(int(fields["status"]), fields.get("body", {}), fields.get("headers", {}))
    if kind != "reply":
        raise ValueError(f"fakellm: unknown response type {kind!r}")
    calls = [ToolCall(**c) for c in fields.pop("tool_calls", [])]
    usage = fields.pop("usage", None)
    return Reply(tool_calls=calls, usage=Usage(**usage) if usage else None, **fields)


def load_script(server: FakeLLM, script: list[Any] | dict[str, Any]) -> None:
    if isinstance(script, list):
        script = {"responses": script}
    server.push(*(response_from_json(r) for r in script.get("responses", [])))
    if "title" in script:
        server.title = script["title"]
    if script.get("fallback"):
        server.fallback = response_from_json(script["fallback"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentcli.demo.scripted_server", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of responses or {responses, title, fallback}")
    parser.add_argument("--record", help="append every request to this file as JSON lines")
    args = parser.parse_args(argv)
    server = FakeLLM(port=args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            load_script(server, json.load(fh))
    if args.record:
        record_path = args.record
        original = server._record

        def record_to_file(rec: Recorded) -> None:
            original(rec)
            line = {"path": rec.path, "headers": rec.headers, "body": rec.body, "title": rec.title}
            with open(record_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")

        server._record = record_to_file  # type: ignore[method-assign]
    server.start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
