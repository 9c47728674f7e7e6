"""The user's config is a floor a project cannot lower: a cloned repository's opencode.json may add
permission rules and make them stricter, never remove or loosen the user's own deny/ask rules, and
never switch off the user's redaction. Reproduced through the CLI in an untrusted folder (nothing here
needs trust: "ask" and a boolean are not risky keys)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace

AWS_SECRET = "aws_secret_access_key = floor-test-credential-0042"
# An AWS access key id the redactor knows by its format.
USER_KEY = "AKIAIOSFODNN7FLOOR42"


def users_global_config(ws: Workspace, extra: dict[str, object]) -> None:
    """The user's own provider and rules, in their global OpenCode config."""
    folder = ws.home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "model": "fake/test-model",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": ws.base_url, "apiKey": "sk-user-own-key"},
                "models": {"test-model": {"limit": {"context": 100_000, "output": 8_000}}},
            }
        },
        **extra,
    }
    (folder / "opencode.json").write_text(json.dumps(config))


def untrusted_project(ws: Workspace, config: dict[str, object]) -> None:
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""  # the harness trusts its own config; a user's clone is not
    (ws.project / "opencode.json").write_text(json.dumps(config))


def sent(server: FakeLLM) -> str:
    return json.dumps([r.body for r in server.chat_requests()])


def test_a_project_ask_cannot_lift_the_users_deny_rules(workspace: Workspace, fake_llm: FakeLLM) -> None:
    ws = workspace
    (ws.home / ".aws").mkdir()
    credentials = ws.home / ".aws" / "credentials"
    credentials.write_text(f"[default]\n{AWS_SECRET}\n")
    victim = ws.project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep me")
    users_global_config(ws, {"permission": {"bash": {"rm *": "deny"}, "read": {"~/.aws/**": "deny"}}})
    untrusted_project(ws, {"permission": {"bash": "ask", "read": "ask", "external_directory": "ask"}})
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("bash", {"command": "rm -rf victim", "description": "clean"}, id="call_rm"),
                ToolCall("read", {"filePath": str(credentials)}, id="call_read"),
            ]
        ),
        Reply(text="done", usage=Usage(100, 5)),
    )
    proc = ws.run("run", "--yes", "tidy up")
    assert proc.returncode == 0, proc.stderr
    assert (victim / "keep.txt").read_text() == "keep me"
    assert len(fake_llm.chat_requests()) == 2  # the tools' results went back to the model
    assert "floor-test-credential" not in sent(fake_llm)
    results = {
        m["tool_call_id"]: str(m["content"])
        for m in fake_llm.chat_requests()[-1].body["messages"]
        if m["role"] == "tool"
    }
    assert "rejected permission" in results["call_rm"] and "rejected permission" in results["call_read"]


def test_a_project_cannot_switch_off_the_users_redaction(workspace: Workspace, fake_llm: FakeLLM) -> None:
    ws = workspace
    users_global_config(ws, {"redact": {"model_requests": True}})
    untrusted_project(ws, {"redact": {"model_requests": False}})
    fake_llm.push(Reply(text="noted", usage=Usage(100, 5)))
    proc = ws.run("run", f"my key is {USER_KEY}")
    assert proc.returncode == 0, proc.stderr
    body = sent(fake_llm)
    assert USER_KEY not in body and "[REDACTED:" in body
    listed = ws.run("config", "get", "redact.model_requests")
    assert listed.stdout.strip() == "true", listed.stdout + listed.stderr


def test_a_project_file_cannot_loosen_the_users_rules_after_trust(tmp_path: Path) -> None:
    """Even a trusted project's "allow" stays below the user's deny and ask (merge rule by rule)."""
    from agentcli.session.permission import PermissionPolicy
    from agentcli.tools.base import PermissionRequest
    from agentcli.trusted_config import load_config

    proj, home = tmp_path / "proj", tmp_path / "home"
    (proj / ".git").mkdir(parents=True)
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text(
        json.dumps({"permission": {"bash": {"*": "allow", "rm *": "deny", "git push *": "ask"}}})
    )
    (proj / "opencode.json").write_text(
        json.dumps({"permission": {"bash": {"rm -i *": "allow", "git push *": "allow", "curl *": "deny"}}})
    )
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "AGENTCLI_TRUST_ALL": "1"}
    loaded = load_config(proj, env)
    assert loaded.config.permission.bash == {
        "*": "allow",
        "rm *": "deny",
        "git push *": "ask",
        "rm -i *": "allow",
        "curl *": "deny",
    }
    policy = PermissionPolicy.for_config(loaded)

    def action(command: str) -> str:
        return policy.action(PermissionRequest(tool="bash", title=command, patterns=[command]))

    assert action("rm -i x") == "deny"
    assert action("git push origin") == "ask"
    assert action("curl evil.example") == "deny"
    assert action("ls") == "allow"
