"""The sandbox behind the bash rules (tools/sandbox.py): a confined command writes only where it may and
reaches no network unless allowed, whatever it is; "on" refuses with one line where the machine cannot
confine; a project's config cannot loosen the user's sandbox."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.config.model import SandboxConfig
from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools import sandbox
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace

WHY = sandbox.unavailable(False) if sys.platform == "linux" else "not Linux"
needs_sandbox = pytest.mark.skipif(WHY is not None, reason=f"this machine cannot confine: {WHY}")


def _run(command: str, cwd: Path, spec: sandbox.Confinement) -> subprocess.CompletedProcess[str]:
    """``command`` started by the sandbox's launcher, as the bash tool starts it."""
    proc = sandbox.launcher(spec).spawn(["bash", "-c", command], cwd, dict(os.environ))
    output = proc.stdout.read().decode()
    return subprocess.CompletedProcess(command, proc.wait(timeout=30), output, output)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and closes: the port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


_CONNECT = "echo hello > /dev/tcp/127.0.0.1/{}"  # bash connects by itself


@needs_sandbox
def test_a_confined_command_writes_only_beneath_its_folders(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    spec = sandbox.Confinement((str(project),), network=True)
    done = _run("mkdir -p sub && echo made > sub/new.txt && echo to-null > /dev/null", project, spec)
    assert done.returncode == 0, done.stderr
    assert (project / "sub" / "new.txt").read_text() == "made\n"
    for attempt in (
        f"echo x > {outside}/new.txt",
        f"rm -f {outside}/keep.txt",
        f"mv {outside}/keep.txt {project}/",
        f"ln -s /etc/passwd {outside}/link",
        f"python3 -c \"open('{outside}/py.txt', 'w')\"",
    ):
        assert _run(attempt, project, spec).returncode != 0, attempt
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep"


@needs_sandbox
def test_a_confined_command_reaches_no_network_unless_allowed(tmp_path: Path, listener: int) -> None:
    closed = _run(_CONNECT.format(listener), tmp_path, sandbox.Confinement((str(tmp_path),), network=False))
    assert closed.returncode != 0 and "unreachable" in closed.stderr.lower()
    opened = _run(_CONNECT.format(listener), tmp_path, sandbox.Confinement((str(tmp_path),), network=True))
    assert opened.returncode == 0, opened.stderr


@needs_sandbox
def test_the_bash_tool_runs_confined_when_the_config_says_so(
    workspace: Workspace, fake_llm: FakeLLM, listener: int
) -> None:
    workspace.write_config({"permission": {"bash": "allow"}, "sandbox": {"bash": "on"}})
    calls = [
        ToolCall("bash", {"command": "echo inside > made.txt", "description": "write here"}),
        ToolCall("bash", {"command": _CONNECT.format(listener), "description": "connect"}),
    ]
    fake_llm.push(Reply(tool_calls=calls), Reply(text="done"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0, proc.stderr
    assert (workspace.project / "made.txt").read_text() == "inside\n"
    [session] = workspace.store().list_sessions()
    parts = [
        p
        for m in workspace.store().messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]
    assert "unreachable" in parts[1].state.output.lower()  # type: ignore[union-attr]


def test_on_refuses_with_one_line_where_the_machine_cannot_confine(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_landlock(spec: sandbox.Confinement) -> None:  # what the launcher says on such a kernel
        raise OSError("the kernel has no Landlock (Linux 5.13 or later, with landlock in the lsm= list)")

    monkeypatch.setattr(sandbox, "launcher", no_landlock)
    with pytest.raises(sandbox.CannotConfine) as refused:
        sandbox.spawner(sandbox.Sandboxing(required=True), Path("/nowhere"))
    assert 'sandbox.bash is "on"' in str(refused.value) and "Landlock" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert sandbox.spawner(sandbox.Sandboxing(required=False), Path("/nowhere")) is None  # auto: unconfined


def test_a_project_can_tighten_the_sandbox_never_loosen_it() -> None:
    users = SandboxConfig(bash="on", network=False, writable=["~/.cache"])
    project = SandboxConfig.model_validate({"bash": False, "network": True, "writable": ["/"]})
    assert project.held_to(users) == SandboxConfig(bash="on", network=False, writable=["~/.cache"])
    assert SandboxConfig(bash="auto").held_to(SandboxConfig()).bash == "auto"  # tightened
    assert SandboxConfig.model_validate({"bash": True}).bash == "on"
