"""The plugin API through the real loop and the scripted server: hook order, isolation of a plugin
that raises, tools registered by plugins, events with OpenCode's names, the two-block system join,
and (through the CLI) plugin specs and load failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentcli.plugins import hookimpl
from agentcli.plugins.api import PluginTool, ToolCallContext
from agentcli.session import events
from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import AssistantMessage, ToolPart
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace


def _system(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


class _Appender:
    def __init__(self, text: str) -> None:
        self.text = text

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append(self.text)


class _Raising:
    """Changes the output, then raises: the change must not reach the request."""

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append("FROM A BROKEN PLUGIN")
        raise RuntimeError("system transform broke\nsecond line")

    @hookimpl
    def tool_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["args"] = {"text": "CHANGED BY A BROKEN PLUGIN"}
        raise ValueError("before broke")


class _Echo(BaseModel):
    text: str


class _ToolPlugin:
    def __init__(self) -> None:
        self.calls: list[ToolCallContext] = []

    @hookimpl
    def tool(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["tools"]["shout"] = PluginTool("shout", "Repeat text in capitals.", _Echo, self.shout)

    def shout(self, args: _Echo, ctx: ToolCallContext) -> str:
        self.calls.append(ctx)
        return args.text.upper()


def test_hooks_run_in_configured_order_and_system_blocks_join_into_two(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = Harness.make(tmp_path, fake_llm, plugins=[_Appender("first plugin"), _Appender("second plugin")])
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    system = _system(fake_llm.chat_requests()[0].body)
    # The agent prompt stays alone (cacheable); everything after it is one block, in configured order.
    assert len(system) == 2
    assert system[1] == "first plugin\nsecond plugin"


class _ReplaceHead:
    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"][0] = "my own agent prompt"
        output["system"] += ["two", "three"]


def test_system_blocks_are_not_joined_when_the_first_block_changed(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, plugins=[_ReplaceHead()])
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    assert _system(fake_llm.chat_requests()[0].body) == ["my own agent prompt", "two", "three"]


def test_a_raising_hook_is_reported_once_per_turn_its_change_dropped_and_the_turn_goes_on(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    tool = _ToolPlugin()
    h = Harness.make(tmp_path, fake_llm, plugins=[_Raising(), _Appender("good plugin"), tool])
    reported: list[str] = []
    assert h.runtime.plugins is not None
    h.runtime.plugins.report = reported.append
    fake_llm.push(Reply(tool_calls=[ToolCall("shout", {"text": "hello"})]), Reply(text="done"))
    h.loop.prompt(h.sid, "shout hello")
    requests = fake_llm.chat_requests()
    assert len(requests) == 2 and h.assistants()[-1].text() == "done"
    for request in requests:
        system = "\n".join(_system(request.body))
        assert "good plugin" in system and "FROM A BROKEN PLUGIN" not in system
    # tool_execute_before raised: the tool ran with the model's arguments.
    [part] = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert part.state.output == "HELLO"
    # One line per (plugin, hook) for the whole turn, though the system hook failed on both requests.
    assert len(reported) == 2, reported
    assert any("chat_system_transform" in line and "system transform broke" in line for line in reported)
    assert any("tool_execute_before" in line and "before broke" in line for line in reported)
    assert all("\n" not in line and "test-plugin-0" in line for line in reported)
    # The next turn reports again.
    fake_llm.push(Reply(text="again"))
    h.loop.prompt(h.sid, "more")
    assert len(reported) == 3


def test_a_plugin_tool_is_offered_called_and_its_result_sent_back(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _ToolPlugin()
    h = Harness.make(tmp_path, fake_llm, plugins=[plugin])
    fake_llm.push(
        Reply(tool_calls=[ToolCall("shout", {"text": "quiet words"}, id="call_1")]),
        Reply(text="it said QUIET WORDS"),
    )
    h.loop.prompt(h.sid, "shout")
    first, second = fake_llm.chat_requests()
    [offered] = [t for t in first.body["tools"] if t["function"]["name"] == "shout"]
    assert offered["function"]["description"] == "Repeat text in capitals."
    assert offered["function"]["parameters"]["properties"]["text"]["type"] == "string"
    [result] = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_1" and "QUIET WORDS" in str(result["content"])
    [ctx] = plugin.calls
    assert ctx.session_id == h.sid and ctx.directory == h.project and ctx.plugin is not None
    assert ctx.message_id == h.assistants()[0].id


def test_bad_arguments_to_a_plugin_tool_are_answered_as_an_error(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, plugins=[_ToolPlugin()])
    fake_llm.push(Reply(tool_calls=[ToolCall("shout", {"words": 3})]), Reply(text="sorry"))
    h.loop.prompt(h.sid, "shout")
    [part] = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert part.state.status == "error" and "text" in (part.state.error or "")


class _SchemaToolPlugin:
    """A tool whose parameters are a JSON schema (a dict): it gets the arguments as a dict."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    @hookimpl
    def tool(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        schema = {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "unit": {"enum": ["cm", "in"]}},
            "required": ["n"],
        }
        output["tools"]["measure"] = PluginTool("measure", "Measure.", schema, self.measure)

    def measure(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        self.got.append(args)
        return f"{args['n']}{args.get('unit', '')}"


def test_a_plugin_tool_with_a_json_schema_is_sent_it_as_given_and_its_arguments_are_checked(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    plugin = _SchemaToolPlugin()
    h = Harness.make(tmp_path, fake_llm, plugins=[plugin])
    fake_llm.push(
        Reply(tool_calls=[ToolCall("measure", {"n": "three", "unit": "ft"}, id="bad")]),
        Reply(tool_calls=[ToolCall("measure", {"n": 3, "unit": "cm", "note": None}, id="good")]),
        Reply(text="done"),
    )
    h.loop.prompt(h.sid, "measure")
    [offered] = [t for t in fake_llm.chat_requests()[0].body["tools"] if t["function"]["name"] == "measure"]
    assert offered["function"]["parameters"]["properties"]["unit"] == {"enum": ["cm", "in"]}
    bad, good = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert bad.state.status == "error"
    assert "Invalid arguments for measure: n: 'three' is not of type 'integer'; unit: 'ft' is not one of" in (
        bad.state.error or ""
    )
    assert good.state.status == "completed" and good.state.output == "3cm"
    assert plugin.got == [{"n": 3, "unit": "cm"}]  # null means "not given", as for every tool


class _Params:
    @hookimpl
    def chat_params(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["temperature"] = 0.25
        output["top_p"] = 0.5

    @hookimpl
    def tool_definition(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        if input["tool_id"] == "shout":
            output["description"] = "Shout, reworded by a plugin."


def test_chat_params_and_tool_definition_change_what_is_sent(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, plugins=[_ToolPlugin(), _Params()])
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    body = fake_llm.chat_requests()[0].body
    assert body["temperature"] == 0.25 and body["top_p"] == 0.5
    [shout] = [t for t in body["tools"] if t["function"]["name"] == "shout"]
    assert shout["function"]["description"] == "Shout, reworded by a plugin."


class _Events:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def event(self, event: Any) -> None:
        self.seen.append(event)


def test_events_reach_plugins_with_opencode_names_and_message_updated_has_real_tokens(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    plugin = _Events()
    h = Harness.make(tmp_path, fake_llm, plugins=[plugin])
    fake_llm.push(
        Reply(tool_calls=[ToolCall("shout", {"text": "x"})], usage=Usage(1200, 30)),
        Reply(text="ok", usage=Usage(1300, 40)),
    )
    h.loop.prompt(h.sid, "hi")
    names = [getattr(e, "name", None) for e in plugin.seen]
    for name in (
        "session.created",
        "session.updated",
        "message.updated",
        "message.part.updated",
        "session.idle",
    ):
        assert name in names, (name, names)
    assert names.index("session.created") < names.index("session.idle")
    updates = [
        e.info
        for e in plugin.seen
        if isinstance(e, events.MessageUpdated) and isinstance(e.info, AssistantMessage)
    ]
    assert [u.tokens.input for u in updates] == [1200, 1300]  # one per step, never a zero placeholder
    assert [u.tokens.output for u in updates] == [30, 40]


class _Shell:
    @hookimpl
    def shell_env(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["env"]["FROM_PLUGIN"] = "plugin-value"

    @hookimpl
    def permission_ask(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["status"] = "allow" if input["tool"] == "bash" else "ask"


def test_shell_env_reaches_bash_and_permission_ask_can_allow(tmp_path: Path, fake_llm: FakeLLM) -> None:
    from agentcli.tools.bash import BashTool

    bash = BashTool()
    h = Harness.make(
        tmp_path,
        fake_llm,
        plugins=[_Shell()],
        tools={bash.name: bash},
        policy=PermissionPolicy(rules={"bash": "ask"}),
    )  # no one to ask: the plugin answers
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo $FROM_PLUGIN", "description": "echo"})]),
        Reply(text="ok"),
    )
    h.loop.prompt(h.sid, "run it")
    [part] = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert part.state.status == "completed", part.state.error
    assert "plugin-value" in part.state.output


def test_a_plugin_cannot_allow_a_line_a_deny_rule_could_be_behind(tmp_path: Path, fake_llm: FakeLLM) -> None:
    """Like --yes, a plugin's "allow" answers only what the rules can read: ``$X`` could be the
    denied ``rm``, so it is refused, and nothing runs."""
    from agentcli.tools.bash import BashTool

    bash = BashTool()
    victim = tmp_path / "keep.txt"
    victim.write_text("kept")
    h = Harness.make(
        tmp_path,
        fake_llm,
        plugins=[_Shell()],
        tools={bash.name: bash},
        policy=PermissionPolicy(rules={"bash": {"*": "allow", "rm *": "deny"}}),
    )  # no one to ask
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": f"X=rm; $X {victim}", "description": "x"})]),
        Reply(text="ok"),
    )
    h.loop.prompt(h.sid, "run it")
    [part] = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert part.state.status == "error"
    assert victim.read_text() == "kept"


# --- through the CLI ---------------------------------------------------------------------------

GOOD_PLUGIN = """
from agentcli.plugins import hookimpl

@hookimpl
def chat_system_transform(input, output):
    output["system"].append("GOOD PLUGIN LOADED")
"""


def test_specs_file_url_and_a_failed_load_is_reported_while_the_others_load(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    good = workspace.root / "elsewhere" / "good.py"
    good.parent.mkdir()
    good.write_text(GOOD_PLUGIN)
    workspace.write_config({"plugin": ["no_such_plugin_module", good.as_uri(), "missing.py"]})
    fake_llm.push(Reply(text="answer"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "answer" in proc.stdout
    assert "GOOD PLUGIN LOADED" in "\n".join(_system(fake_llm.chat_requests()[0].body))
    lines = [line for line in proc.stderr.splitlines() if "plugin" in line]
    assert any("no_such_plugin_module" in line and "failed to load" in line for line in lines), proc.stderr
    assert any("missing.py" in line and "failed to load" in line for line in lines), proc.stderr
    assert "Traceback" not in proc.stderr

    workspace.extra_env["AGENTCLI_DISABLE_PLUGINS"] = "1"
    fake_llm.push(Reply(text="answer two"))
    proc = workspace.run("run", "hi again")
    assert proc.returncode == 0, proc.stderr
    assert "GOOD PLUGIN LOADED" not in "\n".join(_system(fake_llm.chat_requests()[-1].body))
    assert "failed to load" not in proc.stderr


class _Transforms:
    def __init__(self) -> None:
        self.purposes: list[Any] = []

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append("EXTRA SYSTEM BLOCK")

    @hookimpl
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        self.purposes.append(input.get("purpose"))
        for msg in output["messages"]:
            for part in msg.parts:
                if getattr(part, "text", None) == "my secret is hunter2":
                    part.text = "my secret is [REDACTED]"


@pytest.mark.parametrize("request_kind", ["cache", "transcript"])
def test_transforms_also_run_for_the_summary_request(
    tmp_path: Path, fake_llm: FakeLLM, request_kind: str
) -> None:
    plugin = _Transforms()
    h = Harness.make(tmp_path, fake_llm, plugins=[plugin], extra={"compaction": {"request": request_kind}})
    fake_llm.push(Reply(text="noted"))
    h.loop.prompt(h.sid, "my secret is hunter2")
    fake_llm.push(Reply(text="## Objective\n- summary"))
    assert h.loop.compact(h.sid)
    summary = fake_llm.chat_requests()[-1]
    assert bool(summary.body.get("tools")) == (request_kind == "cache")  # the cache-riding one: the chat's
    assert any("EXTRA SYSTEM BLOCK" in block for block in _system(summary.body))
    sent = str(summary.body["messages"])
    assert "[REDACTED]" in sent and "hunter2" not in sent
    assert len(plugin.purposes) == 2  # the chat request and the summary request


class _RaisesEverywhere:
    """Every hook with (input, output) raises after changing nothing useful."""


for _hook in (
    "config",
    "tool",
    "tool_definition",
    "chat_message",
    "chat_params",
    "chat_system_transform",
    "chat_messages_transform",
    "permission_ask",
    "shell_env",
    "command_execute_before",
    "session_compacting",
    "tool_execute_before",
    "tool_execute_after",
):

    def _make(hook: str) -> Any:
        def impl(self: Any, input: dict[str, Any], output: dict[str, Any]) -> None:
            output.clear()  # dropped with the failure: the next hook and the loop see the original
            raise RuntimeError(f"{hook} exploded")

        impl.__name__ = hook
        return hookimpl(impl)

    setattr(_RaisesEverywhere, _hook, _make(_hook))


def test_every_hook_is_isolated_and_the_session_goes_on(tmp_path: Path, fake_llm: FakeLLM) -> None:
    from agentcli.tools.bash import BashTool

    broken, tool = _RaisesEverywhere(), _ToolPlugin()
    h = Harness.make(
        tmp_path,
        fake_llm,
        plugins=[broken, tool],
        tools={"bash": BashTool()},
        policy=PermissionPolicy(rules={"bash": "allow"}),
    )
    reported: list[str] = []
    assert h.runtime.plugins is not None
    h.runtime.plugins.report = reported.append
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("shout", {"text": "a"}),
                ToolCall("bash", {"command": "echo hi", "description": "e"}),
            ]
        ),
        Reply(text="done"),
    )
    h.loop.prompt(h.sid, "go")
    fake_llm.push(Reply(text="## Objective\n- summary"))
    assert h.loop.compact(h.sid, focus="keep it")
    outputs = [p.state.output for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert outputs[0] == "A" and "hi" in outputs[1]
    assert "done" in [m.text() for m in h.assistants()] and len(h.of(events.CompactionFinished)) == 1
    failed = {hook for _, hook, _ in h.runtime.plugins.failures}
    assert failed == {
        "config",
        "tool",
        "tool_definition",
        "chat_message",
        "chat_params",
        "chat_system_transform",
        "chat_messages_transform",
        "permission_ask",
        "shell_env",
        "command_execute_before",
        "session_compacting",
        "tool_execute_before",
        "tool_execute_after",
    }
    assert all(line.count("\n") == 0 and "exploded" in line for line in reported)


class _MessageAndCommand:
    def __init__(self) -> None:
        self.seen_config: Any = None
        self.context: Any = None

    @hookimpl
    def setup(self, context: Any) -> None:
        self.context = context

    @hookimpl
    def config(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        self.seen_config = input["config"]

    @hookimpl
    def chat_message(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["parts"][0].text += " (tagged by a plugin)"

    @hookimpl
    def command_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        if input["command"] == "compact":
            output["arguments"] = "the database schema"


def test_chat_message_command_and_context_hooks(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _MessageAndCommand()
    h = Harness.make(tmp_path, fake_llm, plugins=[plugin])
    fake_llm.push(Reply(text="ok", usage=Usage(5_000, 10)))
    h.loop.prompt(h.sid, "hello")
    assert h.users()[0].text() == "hello (tagged by a plugin)"  # stored as the hook left it
    assert fake_llm.chat_requests()[0].body["messages"][-1]["content"].endswith("(tagged by a plugin)")
    fake_llm.push(Reply(text="## Objective\n- summary"))
    assert h.loop.compact(h.sid)
    assert "the database schema" in str(fake_llm.chat_requests()[-1].body["messages"][-1]["content"])
    # The context handed at setup: where, the config (a copy), the store view and live figures.
    ctx = plugin.context
    assert ctx.directory == h.project and ctx.project_root == h.project
    assert plugin.seen_config is not None and plugin.seen_config is not h.runtime.config
    assert [s.id for s in ctx.store.sessions()] == [h.sid]
    assert len(ctx.store.compactions(h.sid)) == 1
    figures = ctx.session.context(h.sid)
    assert figures.context_limit == h.runtime.model.limits.context and figures.usable == h.runtime.usable()


LISTENER_PLUGIN = """
from pathlib import Path
from agentcli.plugins import hookimpl

@hookimpl
def event(event):
    with open(Path(__file__).with_name("events.log"), "a") as log:
        log.write(f"{event.name} {getattr(event, 'session_id', '')}\\n")
"""


def test_deleting_a_session_tells_the_projects_plugins(workspace: Workspace) -> None:
    (workspace.project / "listener.py").write_text(LISTENER_PLUGIN)
    workspace.write_config({"plugin": ["listener.py"]})
    log = workspace.project / "events.log"
    sid = workspace.store().create_session(str(workspace.project), "fake/test-model", title="doomed").id
    proc = workspace.run("sessions", "delete", sid, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert f"session.deleted {sid}" in log.read_text().splitlines()
    assert workspace.store().list_sessions() == []

    # An untrusted folder's plugin is not loaded to hear it; the deletion itself still happens.
    log.unlink()
    workspace.extra_env["AGENTCLI_TRUST_ALL"] = ""
    other = (
        workspace.store().create_session(str(workspace.project), "fake/test-model", title="also doomed").id
    )
    proc = workspace.run("sessions", "delete", other, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert not log.exists() and workspace.store().list_sessions() == []
