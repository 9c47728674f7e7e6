"""The chat's input: Tab completion, custom commands, `!command` and `@path` mentions."""

from __future__ import annotations

import base64
import json

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
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
    child.send("d")  # one key answers
    child.expect("not run")
    child.expect(PROMPT)
    child.send("!C=echo; $C asked-then-ran\r")
    child.expect("allow\\?")
    child.send("o")
    child.expect("asked-then-ran")
    child.expect("in the conversation")
    child.expect(PROMPT)
    say(child, "!echo plain-ran", "plain-ran", "in the conversation")  # allowed: no question
    assert leave(child) == 0
    assert (folder / "sub" / "keep.txt").read_text() == "keep me"
    assert fake_llm.chat_requests() == []  # the commands asked the model nothing


def test_mentioned_files_are_attached(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "src").mkdir()
    (workspace.project / "src" / "app.py").write_text("print('hello from app')\n")
    (workspace.project / "pic.png").write_bytes(PNG)
    workspace.write_config(images=True)
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


def test_a_binary_mention_is_refused_and_the_message_comes_back(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.project / "dump.raw").write_bytes(b"\x00\x01\x02\xff\xfe" * 200)
    child = spawn(workspace)
    say(child, "what is in @dump.raw?", "cannot attach dump.raw: it is a binary file", "not sent")
    child.expect(r"what is in @dump\.raw\?")  # the message is back in the prompt, to edit
    child.send("\x15")  # Ctrl-U: clear the line
    assert leave(child) == 0
    assert fake_llm.chat_requests() == []  # nothing (and no mojibake) went to the model


def test_a_mention_of_a_missing_file_is_told_and_not_sent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hi someone."))
    child = spawn(workspace)
    say(child, "summarise @nope.txt.", "cannot attach nope.txt: there is no such file", "not sent")
    child.send("\x15")  # Ctrl-U: clear the line
    assert fake_llm.chat_requests() == []
    say(child, "say hi to @someone", "Hi someone.")  # a mention that is no path stays a word
    assert leave(child) == 0


def test_a_folder_mention_attaches_its_listing(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "src" / "pkg").mkdir(parents=True)
    (workspace.project / "src" / "app.py").write_text("print(1)\n")
    (workspace.project / "src" / "pkg" / "util.py").write_text("x = 1\n")
    fake_llm.push(Reply(text="Seen the folder.", usage=Usage(800, 5)))
    child = spawn(workspace)
    say(child, "what lives in @src?", "attached: src", "Seen the folder.")
    assert leave(child) == 0
    sent = _last_user(fake_llm)
    assert isinstance(sent, str) and "what lives in @src?" in sent
    assert "app.py" in sent and "pkg/" in sent and "util.py" in sent


def test_an_attached_file_counts_as_read_so_the_first_edit_goes_through(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    notes = workspace.project / "notes.txt"
    notes.write_text("colour: red\n")
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall(
                    "edit",
                    {"filePath": str(notes), "oldString": "colour: red", "newString": "colour: blue"},
                )
            ]
        ),
        Reply(text="Changed it.", usage=Usage(900, 5)),
    )
    child = spawn(workspace, "chat", "--yes")
    say(child, "make @notes.txt blue", "Changed it.")
    assert leave(child) == 0
    assert notes.read_text() == "colour: blue\n"
    results = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert results and "must read" not in results[0]
