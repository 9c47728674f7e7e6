"""h2 deferred (agentcli.llm.deferred_h2): httpcore loads without it, and HTTP/2 still works when a
connection negotiates it. In a fresh interpreter: the test process has loaded httpcore already."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import sys
from agentcli.llm import deferred_h2

deferred_h2.defer()
import httpcore, httpx

httpx.Client(http2=False)
print("loaded before:", "hpack" in sys.modules)
import hpack, hyperframe.frame

frames = [
    hyperframe.frame.SettingsFrame().serialize(),
    hyperframe.frame.HeadersFrame(
        stream_id=1, data=hpack.Encoder().encode([(b":status", b"200")]), flags=["END_HEADERS"]
    ).serialize(),
    hyperframe.frame.DataFrame(stream_id=1, data=b"over HTTP/2", flags=["END_STREAM"]).serialize(),
]
backend = httpcore.MockBackend(frames, http2=True)
with httpcore.ConnectionPool(network_backend=backend, http2=True) as pool:
    response = pool.request("GET", "https://example.com/")
print(response.status, response.content.decode(), response.extensions["http_version"].decode())
import h2.config, h2.connection
print("one module:", h2.connection.H2Configuration is h2.config.H2Configuration)
"""


def test_httpcore_loads_without_h2_and_http2_still_works() -> None:
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [
        "loaded before: False",
        "200 over HTTP/2 HTTP/2",
        "one module: True",
    ]
