"""A tiny HTTP server that answers every POST with one recorded provider response, byte for byte.

The recordings live in tests/fixtures/streams/ (see its README): ``<name>.sse`` is the body, ``<name>.json``
the status, the recorded content headers and the expected result. The body is written one SSE event at a
time (chunked transfer encoding, flushed per event) as providers stream it; with ``encoding`` set, the
server compresses it the way a provider would (one compressor for the whole body, flushed per event) and
says so in ``Content-Encoding``.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

STREAMS = Path(__file__).parent / "fixtures" / "streams"


@dataclass(frozen=True)
class Recording:
    name: str
    body: bytes
    meta: dict[str, Any]

    @property
    def api(self) -> str:
        return str(self.meta["api"])

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.meta["expect"])

    def events(self) -> list[bytes]:
        """The body split after each blank line (the pieces the server flushes one by one)."""
        pieces = self.body.split(b"\n\n")
        out = [piece + b"\n\n" for piece in pieces[:-1]]
        return out + ([pieces[-1]] if pieces[-1] else [])


def load(name: str) -> Recording:
    return Recording(
        name,
        (STREAMS / f"{name}.sse").read_bytes(),
        json.loads((STREAMS / f"{name}.json").read_text()),
    )


def names(api: str | None = None) -> list[str]:
    found = sorted(p.stem for p in STREAMS.glob("*.json"))
    return [n for n in found if api is None or load(n).api == api]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]


class _Compressor:
    def __init__(self, encoding: str) -> None:
        if encoding == "br":
            import brotli  # type: ignore[import-not-found]

            self._br = brotli.Compressor()
            self._z = None
        else:
            wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}[encoding]
            self._z = zlib.compressobj(wbits=wbits)
            self._br = None

    def piece(self, data: bytes) -> bytes:
        if self._z is not None:
            return self._z.compress(data) + self._z.flush(zlib.Z_SYNC_FLUSH)
        return self._br.process(data) + self._br.flush()

    def end(self) -> bytes:
        return self._z.flush() if self._z is not None else self._br.finish()


@dataclass
class ReplayServer:
    """Serves ``recording`` to every POST; ``seen`` keeps each request."""

    recording: Recording | None = None
    encoding: str | None = None
    delay: float = 0.0  # seconds between events (a slow provider)
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ReplayServer:
        self._thread.daemon = True
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def pieces(self) -> Iterator[bytes]:
        assert self.recording is not None
        if self.encoding is None:
            yield from self.recording.events()
            return
        compressor = _Compressor(self.encoding)
        for event in self.recording.events():
            yield compressor.piece(event)
        yield compressor.end()


def _handler(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            recording = server.recording
            assert recording is not None
            self.send_response(int(recording.meta.get("status") or 200))
            for name, value in (recording.meta.get("headers") or {}).items():
                self.send_header(name, value)
            if server.encoding:
                self.send_header("Content-Encoding", server.encoding)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for n, piece in enumerate(server.pieces()):
                    if n and server.delay:
                        time.sleep(server.delay)  # the provider's pace, not test synchronisation
                    if piece:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler
