"""The chat's input: Tab completion, custom commands, `!command` and `@path` mentions."""

from __future__ import annotations

import base64
import json

from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _last_user(fake_llm: FakeLLM) -> object:
    return [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "user"][-1]


def test_tab_completes_slash_commands_and_paths(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "notes.txt").write_text("the notes\n")
    child = spawn(workspace)
    child.send("/cont\t")
    child.expect("ext")  # the completion is drawn after what was typed
    child.send("\r")
    child.expect("nothing in the window yet")  # the completed command ran
    child.expect(PROMPT)
    fake_llm.push(Reply(text="Read them.", usage=Usage(800, 5)))
    child.send("summarise @no\t")
    child.expect(r"tes\.txt")  # the completion is drawn after what was typed
    say(child, "", "Read them.")
    assert leave(child) == 0
    assert "the notes" in json.dumps(fake_llm.chat_requests()[-1].body["messages"])


def test_a_custom_command_sends_its_template(workspace: Workspace, fake_llm: FakeLLM) -> None:
    folder = workspace.project / ".opencode" / "command"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review some files\n---\nReview $ARGUMENTS carefully. Start with $1.\n"
    )
    fake_llm.push(Reply(text="Reviewed.", usage=Usage(800, 5)))
    child = spawn(workspace)
    say(child, "/review app.py tests.py", "Reviewed.")
    assert leave(child) == 0
    assert _last_user(fake_llm) == "Review app.py tests.py carefully. Start with app.py."


def test_bang_runs_a_command_into_the_conversation(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"permission": {"bash": {"*": "ask", "rm *": "deny"}}})
    victim = workspace.project / "keep.txt"
    victim.write_text("keep me")
    child = spawn(workspace)
    say(child, "!echo shell-said-hi", "shell-said-hi", "in the conversation")
    say(child, "!rm keep.txt", "refused")
    fake_llm.push(Reply(text="It said hi.", usage=Usage(800, 5)))
    say(child, "what did it say?", "It said hi.")
    assert leave(child) == 0
    assert victim.exists()
    users = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "user"]
    assert "shell-said-hi" in users[-2] and "echo shell-said-hi" in users[-2]
    assert users[-1] == "what did it say?"
    assert len(fake_llm.chat_requests()) == 1  # the command itself asked the model nothing


def test_bang_holds_the_bash_deny_rules_wherever_the_command_hides(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """`!cmd` is matched as the bash tool's command line is: each command it runs, however spelled;
    one whose command cannot be known is asked about, and a "deny" answer leaves it unrun."""
    workspace.write_config({"permission": {"bash": {"*": "allow", "rm *": "deny"}}})
    folder = workspace.project / "D"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("keep me")
    child = spawn(workspace)
    say(child, "!true && rm -rf D", "refused", "deny `rm -rf D`")
    say(child, "!$'rm' -rf D", "refused")
    say(child, "!bash -o errexit -c 'rm -rf D'", "refused")
    child.send("!C=rm; $C -rf D\r")
    child.expect("asked because the command name is computed at run time")
    child.expect("allow\\?")
    say(child, "d", "not run")
    child.send("!C=echo; $C asked-then-ran\r")
    child.expect("allow\\?")
    say(child, "o", "asked-then-ran", "in the conversation")
    say(child, "!echo plain-ran", "plain-ran", "in the conversation")  # allowed: no question
    assert leave(child) == 0
    assert (folder / "sub" / "keep.txt").read_text() == "keep me"
    assert fake_llm.chat_requests() == []  # the commands asked the model nothing


def test_mentioned_files_are_attached(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "src").mkdir()
    (workspace.project / "src" / "app.py").write_text("print('hello from app')\n")
    (workspace.project / "pic.png").write_bytes(PNG)
    fake_llm.push(Reply(text="Looked.", usage=Usage(800, 5)))
    child = spawn(workspace)
    say(child, "compare @src/app.py with @pic.png", "attached", "Looked.")
    assert leave(child) == 0
    content = _last_user(fake_llm)
    assert isinstance(content, list)
    texts = " ".join(item.get("text", "") for item in content)
    assert "compare @src/app.py with @pic.png" in texts and "print('hello from app')" in texts
    images = [item for item in content if item["type"] == "image_url"]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
