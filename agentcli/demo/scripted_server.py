"""A scripted OpenAI-compatible chat-completions server: the model of ``agentcli demo`` and of the tests.

It ships in the package so the demo runs with no key and no network; ``tests/fakellm.py`` re-exports it.
This module is the server's lifecycle, scripting and the standalone entry point; the script's
records live in ``replies``, the wire format in ``wire``, the HTTP side in ``http_handler``, and all
are importable from here.

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
import itertools
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from agentcli.demo.http_handler import FAST_BATCH, FAST_CACHE_MIN, NO_SCRIPT_MESSAGE, _Server
from agentcli.demo.local_servers import LocalServer
from agentcli.demo.replies import (
    ErrorResponse,
    Hang,
    Recorded,
    Reply,
    Response,
    Rule,
    ToolCall,
    Usage,
    is_chat_path,
    is_summary_request,
    is_title_request,
    response_from_json,
)
from agentcli.demo.wire import completion_object, stream_chunks

__all__ = [
    "FAST_BATCH",
    "FAST_CACHE_MIN",
    "NO_SCRIPT_MESSAGE",
    "ErrorResponse",
    "FakeLLM",
    "Hang",
    "Recorded",
    "Reply",
    "Response",
    "Rule",
    "ToolCall",
    "Usage",
    "completion_object",
    "is_chat_path",
    "is_summary_request",
    "is_title_request",
    "load_script",
    "main",
    "response_from_json",
    "stream_chunks",
    "unused_port",
]


class FakeLLM:
    def __init__(self, port: int = 0) -> None:
        self.title = "Scripted title"
        self.models = ["test-model"]
        self.local: LocalServer | None = None  # answer as a local model server does (demo/local_servers.py)
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
        self._httpd = _Server(("127.0.0.1", self._port), self)
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

    def settled(self, rec: Recorded, timeout: float = 60.0) -> str:
        """``rec``'s outcome once the server has finished with it: a client may read a reply's last
        event before the server's thread records how the request ended."""
        deadline = time.monotonic() + timeout
        while rec.outcome == "pending" and time.monotonic() < deadline:
            time.sleep(0.02)
        return rec.outcome

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


def unused_port() -> int:
    """A local port nothing listens on (for "connection refused" tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
