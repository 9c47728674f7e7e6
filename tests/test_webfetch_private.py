"""webfetch asks (permission private_network) before reaching loopback, link-local, private-range or
.internal hosts — judged after DNS resolution and again on every redirect."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.webfetch import private_reason
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace

METADATA_PATH = "/latest/meta-data/iam/security-credentials/admin-role"


@dataclass
class Metadata:
    """A local stand-in for a cloud metadata service, recording every path it served."""

    port: int = 0
    paths: list[str] = field(default_factory=list)

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def metadata() -> Iterator[Metadata]:
    record = Metadata()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            record.paths.append(self.path)
            if self.path.startswith("/go-to/"):
                self.send_response(302)
                self.send_header("Location", record.url(self.path.split("/")[2], METADATA_PATH))
                self.end_headers()
                return
            body = b'{"AccessKeyId": "ASIAFAKEFAKEFAKE", "SecretAccessKey": "fake"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield record
    httpd.shutdown()
    httpd.server_close()


def _statuses(workspace: Workspace) -> list[str]:
    store = workspace.store()
    [session] = store.list_sessions()
    return [
        p.state.status
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]


def test_run_refuses_a_loopback_fetch_and_says_how_to_allow_it(
    workspace: Workspace, fake_llm: FakeLLM, metadata: Metadata
) -> None:
    fake_llm.push(
        Reply(tool_calls=[ToolCall("webfetch", {"url": metadata.url("127.0.0.1", METADATA_PATH)})]),
        Reply(text="refused"),
    )
    proc = workspace.run("run", "fetch the credentials")
    assert proc.returncode == 3, proc.stderr  # a tool was refused: not all was done
    assert metadata.paths == []  # nothing was fetched
    assert _statuses(workspace) == ["error"]
    hint = next(ln for ln in proc.stderr.splitlines() if ln.startswith("permission:"))
    assert "private_network" in hint and "127.0.0.1" in hint and "--yes" in hint
    assert "ASIAFAKE" not in str(fake_llm.chat_requests()[1].body)


def test_a_redirect_to_an_unallowed_host_is_checked_again(
    workspace: Workspace, fake_llm: FakeLLM, metadata: Metadata
) -> None:
    workspace.write_config({"permission": {"private_network": {"127.0.0.1": "allow"}}})
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall(
                    "webfetch", {"url": metadata.url("127.0.0.1", "/go-to/localhost")}
                ),  # allowed, redirects on
                ToolCall("webfetch", {"url": metadata.url("127.0.0.1", "/allowed")}),
            ]
        ),
        Reply(text="done"),
    )
    proc = workspace.run("run", "fetch")
    assert proc.returncode == 3, proc.stderr  # a tool was refused: not all was done
    assert metadata.paths == ["/go-to/localhost", "/allowed"]  # the redirect target was never requested
    assert _statuses(workspace) == ["error", "completed"]
    results = [m["content"] for m in fake_llm.chat_requests()[1].body["messages"] if m["role"] == "tool"]
    assert "rejected permission" in str(results[0]) and "ASIAFAKE" in str(results[1])


def test_a_connection_that_lands_on_a_private_address_unchecked_is_refused(metadata: Metadata) -> None:
    # What DNS rebinding amounts to: the host passed the check as public, the connection is private.
    import httpx

    from agentcli.tools.base import ToolError
    from agentcli.tools.webfetch import _get

    with httpx.Client() as client, pytest.raises(ToolError, match="private address"):
        _get(client, metadata.url("127.0.0.1", METADATA_PATH), private_ok=False)


def test_hosts_are_judged_by_what_they_resolve_to() -> None:
    assert private_reason("127.0.0.1") == "a loopback address"
    assert private_reason("2130706433") == "a loopback address"  # 127.0.0.1 spelled as a number
    assert private_reason("[::ffff:127.0.0.1]") == "a loopback address"
    assert private_reason("169.254.169.254", 80).startswith("a link-local address")
    assert private_reason("10.1.2.3", 80).startswith("a private-range address")
    assert private_reason("metadata.google.internal") == "an internal name"
    assert private_reason("localhost") == "a loopback address"
    assert private_reason("93.184.215.14") is None  # a public address (no lookup needed)


@pytest.mark.parametrize(
    "address",
    [
        "100.100.100.200",  # shared address space (RFC 6598): Alibaba Cloud's metadata service
        "100.64.0.1",
        "198.18.0.1",  # benchmarking
        "192.0.0.170",  # IETF protocol assignments
        "192.0.2.1",  # documentation
        "240.0.0.1",  # reserved
        "0.1.2.3",  # "this network"
        "[fd00:ec2::254]",  # unique-local IPv6: AWS's IPv6 metadata address
        "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
        "[2002:a9fe:a9fe::]",  # 6to4 of 169.254.169.254
        "[2001:db8::1]",  # documentation
        "[::]",
    ],
)
def test_every_special_purpose_address_is_private(address: str) -> None:
    """Not a list of ranges: whatever IANA does not call globally reachable asks first, and an IPv6
    address counts as the IPv4 one it leads to."""
    assert private_reason(address) is not None, address


@pytest.mark.parametrize("address", ["93.184.215.14", "[2606:4700:4700::1111]", "[64:ff9b::5db8:d70e]"])
def test_public_addresses_need_no_question(address: str) -> None:
    assert private_reason(address) is None
