"""The scripted server's HTTP side: one request recorded and answered from the script, streamed
as SSE (fast: many events per write; paced: ``delay`` apart, ``cut_after`` ending it early)."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from agentcli.demo import anthropic_wire
from agentcli.demo.anthropic_wire import AnthropicReply
from agentcli.demo.local_servers import LocalServer
from agentcli.demo.replies import (
    ErrorResponse,
    Hang,
    Recorded,
    Reply,
    Response,
    Usage,
    is_chat_path,
    is_title_request,
)
from agentcli.demo.wire import completion_object, stream_chunks

FAST_BATCH = 64  # SSE events per HTTP chunk when a reply streams without delays
FAST_CACHE_MIN = 1000  # replies at least this many events long are encoded once per server

NO_SCRIPT_MESSAGE = "fakellm: no scripted response left"


class Script(Protocol):
    """What the handler needs of the server (``FakeLLM``): its script and its record."""

    models: list[str]
    _stopping: threading.Event  # set when the server stops: hanging handlers give up
    local: LocalServer | None  # speaking as a local model server about its window (local_servers.py)
    _encoded: dict[tuple[int, str, bool], list[bytes]]

    def _record(self, rec: Recorded) -> None: ...

    def _next_response(self, rec: Recorded) -> Response | None: ...

    def _sleep(self, seconds: float) -> bool: ...

    def _new_id(self, prefix: str) -> str: ...


class _Stop(Exception):
    """The client went away or the script says to drop the connection."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], fakellm: Script) -> None:
        self.fakellm = fakellm  # the script and the record the handler answers from
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled request, a reused connection closed) is routine here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """One HTTP request to the scripted server: record it, answer it from the script."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this a kept-alive client waits ~40 ms on each
    # small answer (Nagle's algorithm against delayed ACKs), as no real model server makes it wait.
    disable_nagle_algorithm = True
    server: _Server

    @property
    def fakellm(self) -> Script:
        return self.server.fakellm

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        rec = Recorded(self.path, self._headers(), {}, method="GET")
        self.fakellm._record(rec)
        local = self.fakellm.local.get(self.path) if self.fakellm.local is not None else None
        if local is not None:
            self._send_json(*local)
            rec.outcome = "complete"
        elif self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fakellm"} for m in self.fakellm.models
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
        local = self.fakellm.local
        said = local.post(self.path, body) if local is not None else None
        if said is not None:
            self.fakellm._record(rec)
            rec.outcome = "complete"
            self._send_json(*said)
            return
        chat = is_chat_path(self.path) and not rec.title
        too_long = local.overflow(body) if local is not None and chat else None
        if too_long is not None:
            self.fakellm._record(rec)
            rec.outcome = "error"
            self._send_json(*too_long)
            return
        if not is_chat_path(self.path):
            self.fakellm._record(rec)
            rec.outcome = "error"
            self._send_json(404, {"error": {"message": f"fakellm: no route {self.path}"}})
            return
        response = self.fakellm._next_response(rec)
        cut = local.cut(body) if local is not None and chat else None
        if cut is not None and isinstance(response, Reply):  # Ollama: the prompt cut to its window
            response = replace(response, usage=Usage(prompt_tokens=cut, completion_tokens=10))
        self.fakellm._record(rec)
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
            self.fakellm._sleep(response.seconds)
            self._drop()
        elif rec.path.rstrip("/").endswith("/messages"):
            anthropic_wire.serve(self, self.fakellm, rec, body, response)
        elif isinstance(response, AnthropicReply):
            self._answer(rec, body, response.reply)
        elif (body.get("stream") is True) if response.stream is None else response.stream:
            self._stream(rec, body, response)
        else:
            rec.outcome = "complete"
            self._send_json(200, completion_object(self.fakellm, body, response))

    def _stream(self, rec: Recorded, body: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if reply.delay <= 0 and reply.cut_after is None and reply.hold is None:
            self._stream_fast(rec, body, reply)
        else:
            self._stream_paced(rec, body, reply)

    def _stream_fast(self, rec: Recorded, body: dict[str, Any], reply: Reply) -> None:
        """Many SSE events per write, so the server outpaces any client (benchmarks stream 16,000
        chunks); a client sees the same bytes in the same order. A large reply served again (a
        benchmark's fallback) is encoded once."""
        key = (
            id(reply),
            str(body.get("model")),
            bool((body.get("stream_options") or {}).get("include_usage")),
        )
        frames = self.fakellm._encoded.get(key)
        if frames is None:
            frames = [
                f"data: {json.dumps(data)}\n\n".encode() for data in stream_chunks(self.fakellm, body, reply)
            ]
            frames.append(b"data: [DONE]\n\n")
            if len(frames) >= FAST_CACHE_MIN:
                self.fakellm._encoded[key] = frames
        for start in range(0, len(frames), FAST_BATCH):
            self._write_chunk(b"".join(frames[start : start + FAST_BATCH]))
        self._write_chunk(b"")
        rec.outcome = "complete"

    def _stream_paced(self, rec: Recorded, body: dict[str, Any], reply: Reply) -> None:
        """One SSE event per write, ``delay`` apart; ``cut_after`` ends the stream early."""
        for n, data in enumerate(stream_chunks(self.fakellm, body, reply)):
            if reply.cut_after is not None and n >= reply.cut_after:
                self._cut(rec, reply)
                return
            if n and not self.fakellm._sleep(reply.delay):
                self._drop()
            while n == 2 and reply.hold is not None and not reply.hold.wait(0.05):  # after a first piece
                if self.fakellm._stopping.is_set():
                    self._drop()
            self._write_chunk(f"data: {json.dumps(data)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # the terminating zero-length chunk
        rec.outcome = "complete"

    def _cut(self, rec: Recorded, reply: Reply) -> None:
        """End a stream early: dropped, or (``cut_clean``) closed properly as a proxy would."""
        rec.outcome = "cut"
        if reply.stall > 0 and not self.fakellm._sleep(reply.stall):
            self._drop()
        if not reply.cut_clean:
            self._drop()
        self._write_chunk(b"")

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
