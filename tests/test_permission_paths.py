"""Paths outside the project (permission external_directory) and secret stores (permission read):
asked in the chat, refused by `run` without --yes with a one-line hint, allowed by pattern."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.base import PermissionRequest
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_tools_support import call, make_ctx
from tests.workspace import Workspace


def _parts(workspace: Workspace) -> list[ToolPart]:
    store = workspace.store()
    [session] = store.list_sessions()
    return [
        p
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]


def _plant(workspace: Workspace) -> tuple[Path, Path]:
    ssh = workspace.home / ".ssh"
    ssh.mkdir()
    key = ssh / "id_rsa"
    key.write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    outside = workspace.root / "outside.txt"
    outside.write_text("outside secret text\n")
    return key, outside


def test_run_without_yes_refuses_reads_outside_the_project(workspace: Workspace, fake_llm: FakeLLM) -> None:
    key, outside = _plant(workspace)
    (workspace.project / "link.txt").symlink_to(outside)  # a symlink in the project pointing out
    (workspace.project / ".env").write_text("DB_PASSWORD=hunter2-very-secret\n")
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("read", {"filePath": str(key)}),
                ToolCall("read", {"filePath": "../outside.txt"}),
                ToolCall("read", {"filePath": "link.txt"}),
                ToolCall("glob", {"pattern": "*", "path": str(key.parent)}),
                ToolCall("list", {"path": "/etc"}),
                ToolCall("grep", {"pattern": "secret", "path": str(workspace.root)}),
                ToolCall("read", {"filePath": ".env"}),
                ToolCall("write", {"filePath": str(workspace.root / "planted.txt"), "content": "x"}),
                ToolCall("bash", {"command": "echo hi", "workdir": str(workspace.root), "description": "x"}),
            ]
        ),
        Reply(text="could not"),
    )
    proc = workspace.run("run", "look around")
    assert proc.returncode == 3, proc.stderr  # a tool was refused: not all was done
    parts = _parts(workspace)
    assert [p.state.status for p in parts] == ["error"] * 9
    body = str(fake_llm.chat_requests()[1].body)
    for secret in ("OPENSSH PRIVATE", "outside secret text", "hunter2", "id_rsa\\n"):
        assert secret not in body
    assert not (workspace.root / "planted.txt").exists()
    # One line per refusal for the human, naming the permission and how to allow it.
    hints = [ln for ln in proc.stderr.splitlines() if ln.startswith("permission:")]
    assert len(hints) == 9, proc.stderr
    assert any("external_directory" in h and str(workspace.root) in h and "--yes" in h for h in hints)
    assert any('"read"' in h and ".ssh" in h for h in hints)
    assert "could not" in proc.stdout


def test_patterns_allow_an_outside_folder_and_a_secret(workspace: Workspace, fake_llm: FakeLLM) -> None:
    key, outside = _plant(workspace)
    (workspace.project / ".env").write_text("TOKEN=abc\n")
    workspace.write_config(
        {
            "permission": {
                "external_directory": {str(workspace.root) + "/*": "allow"},
                "read": {"*/.env": "allow"},
            }
        }
    )
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("read", {"filePath": str(outside)}),
                ToolCall("read", {"filePath": ".env"}),
                ToolCall(
                    "read", {"filePath": str(key)}
                ),  # still a secret store: not covered by those patterns
            ]
        ),
        Reply(text="ok"),
    )
    proc = workspace.run("run", "read them")
    assert proc.returncode == 3, proc.stderr  # a tool was refused: not all was done
    assert [p.state.status for p in _parts(workspace)] == ["completed", "completed", "error"]
    results = [m["content"] for m in fake_llm.chat_requests()[1].body["messages"] if m["role"] == "tool"]
    assert "outside secret text" in results[0] and "TOKEN=abc" in results[1]
    assert "OPENSSH" not in results[2]


def test_an_outside_read_asks_the_user_once_and_reads_after_approval(tmp_path: Path) -> None:
    ctx, asker = make_ctx(tmp_path)
    (tmp_path / "out.txt").write_text("x\n")
    (ctx.directory / "in.txt").write_text("y\n")
    call(ctx, "read", {"filePath": "in.txt"})
    assert asker.asked == []  # inside the project nobody is asked
    res = call(ctx, "read", {"filePath": str(tmp_path / "out.txt")})
    assert "1: x" in res.output
    assert [(r.tool, r.patterns) for r in asker.asked] == [
        ("external_directory", [str(tmp_path / "out.txt")])
    ]


def test_outside_paths_ask_by_default_and_last_pattern_wins() -> None:
    policy = PermissionPolicy(rules={"external_directory": {"/srv/*": "allow", "/srv/private/*": "deny"}})
    ext = lambda p: PermissionRequest(tool="external_directory", title=p, patterns=[p])  # noqa: E731
    assert policy.action(ext("/etc/passwd")) == "ask"
    assert policy.action(ext("/srv/data/a.csv")) == "allow"
    assert policy.action(ext("/srv/private/k")) == "deny"
    read = lambda p: PermissionRequest(tool="read", title=p, patterns=[p])  # noqa: E731
    home = os.path.expanduser("~")
    assert PermissionPolicy().action(read(f"{home}/.aws/credentials")) == "ask"
    assert PermissionPolicy().action(read(f"{home}/.ssh")) == "ask"  # listing the folder itself
    assert PermissionPolicy().action(read("/p/.env.production")) == "ask"
    assert PermissionPolicy().action(read("/p/.env.example")) == "allow"


def test_always_for_an_outside_path_covers_its_folder_only() -> None:
    asked: list[str] = []

    def asker(request: PermissionRequest) -> str:
        asked.append(request.patterns[0])
        return "always"

    policy = PermissionPolicy(asker=asker)  # type: ignore[arg-type]
    ext = lambda p: PermissionRequest(tool="external_directory", title=p, patterns=[p])  # noqa: E731
    assert policy.decide(ext("/srv/data/a.csv")) == "always"
    assert policy.decide(ext("/srv/data/deeper/b.csv")) == "once"
    assert policy.decide(ext("/srv/other/c.csv")) == "always"
    assert asked == ["/srv/data/a.csv", "/srv/other/c.csv"]


def test_a_grep_of_the_project_does_not_read_env_files(tmp_path: Path) -> None:
    from agentcli.tools.grep import GrepTool
    from agentcli.tools.registry import run_tool

    ctx, asker = make_ctx(tmp_path)
    (ctx.directory / ".env").write_text("DB_PASSWORD=hunter2\n")
    (ctx.directory / "app.py").write_text("password = os.environ['DB_PASSWORD']\n")
    res = run_tool(GrepTool(use_ripgrep=False), {"pattern": "PASSWORD"}, ctx)
    assert "app.py" in res.output and "hunter2" not in res.output
    (tmp_path / "outside.txt").write_text("DB_PASSWORD=from-outside\n")
    (ctx.directory / "link.txt").symlink_to(tmp_path / "outside.txt")  # a link out of the project
    res = run_tool(GrepTool(use_ripgrep=False), {"pattern": "PASSWORD"}, ctx)
    assert "from-outside" not in res.output
    assert asker.asked == []
    direct = run_tool(GrepTool(use_ripgrep=False), {"pattern": "PASSWORD", "path": ".env"}, ctx)
    assert "hunter2" in direct.output  # by path it is a read of a secret: asked (and approved here)
    assert [r.tool for r in asker.asked] == ["read"]
