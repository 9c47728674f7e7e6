"""Plugins as pluggy plugins: hooks go through pluggy's own caller, so what a plugin author knows
from pluggy works (wrappers old and new, tryfirst/trylast, a firstresult spec), in configured order
and with every implementation isolated; and AGENTCLI_LOAD_PLUGINS picks which plugins load."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pluggy

from agentcli.plugins import hookimpl
from agentcli.plugins.manager import Plugins
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply
from tests.workspace import Workspace


def _system(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


def _extra_blocks(fake_llm: FakeLLM) -> str:
    """What the plugins added after the agent prompt, in the first request (one joined block)."""
    system = _system(fake_llm.chat_requests()[0].body)
    return system[1] if len(system) > 1 else ""


class _Appender:
    def __init__(self, text: str) -> None:
        self.text = text

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append(self.text)


class _First:
    @hookimpl(tryfirst=True)
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append("tryfirst")


class _Last:
    @hookimpl(trylast=True)
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append("trylast")


class _Wrapper:
    """A new-style wrapper: it runs around the other implementations and sees what they did."""

    @hookimpl(wrapper=True)
    def chat_system_transform(
        self, input: dict[str, Any], output: dict[str, Any]
    ) -> Generator[None, Any, Any]:
        before = len(output["system"])
        result = yield
        output["system"].append(f"wrapper saw {len(output['system']) - before} added")
        return result


class _OldWrapper:
    @hookimpl(hookwrapper=True)
    def chat_system_transform(
        self, input: dict[str, Any], output: dict[str, Any]
    ) -> Generator[None, Any, None]:
        outcome = yield
        outcome.get_result()  # the others' results (none of them returns one): no exception
        output["system"].append("old-style wrapper after")


class _BrokenWrapper:
    """Changes the output on both sides of its yield, then raises after it."""

    @hookimpl(wrapper=True)
    def chat_system_transform(
        self, input: dict[str, Any], output: dict[str, Any]
    ) -> Generator[None, Any, Any]:
        output["system"].append("BROKEN WRAPPER BEFORE")
        result = yield
        output["system"].append("BROKEN WRAPPER AFTER")
        raise RuntimeError("wrapper broke")
        return result  # pragma: no cover


class _WrapperBrokenBeforeYield:
    @hookimpl(wrapper=True)
    def chat_system_transform(
        self, input: dict[str, Any], output: dict[str, Any]
    ) -> Generator[None, Any, Any]:
        output["system"].append("BROKEN BEFORE YIELD")
        raise ValueError("setup broke")
        yield  # pragma: no cover


def test_hooks_keep_configured_order_with_tryfirst_and_trylast(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugins = [_Appender("one"), _Last(), _Appender("two"), _First(), _Appender("three")]
    h = Harness.make(tmp_path, fake_llm, plugins=plugins)
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    assert _extra_blocks(fake_llm) == "tryfirst\none\ntwo\nthree\ntrylast"


def test_wrappers_run_around_the_other_implementations(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugins = [_Wrapper(), _Appender("one"), _OldWrapper(), _Appender("two")]
    h = Harness.make(tmp_path, fake_llm, plugins=plugins)
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    # The first configured wrapper is the outermost: it sees the old-style wrapper's line too.
    assert _extra_blocks(fake_llm) == "one\ntwo\nold-style wrapper after\nwrapper saw 3 added"


def test_a_raising_wrapper_is_dropped_with_one_line_and_the_others_still_count(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    plugins = [_BrokenWrapper(), _Appender("one"), _WrapperBrokenBeforeYield(), _Appender("two")]
    h = Harness.make(tmp_path, fake_llm, plugins=plugins)
    reported: list[str] = []
    assert h.runtime.plugins is not None
    h.runtime.plugins.report = reported.append
    fake_llm.push(Reply(text="ok"))
    h.loop.prompt(h.sid, "hi")
    assert h.assistants()[-1].text() == "ok"
    # Its change after the yield is undone; before the yield it had already run, and the others
    # built on it: that part stays (a wrapper's failure never takes the others' work away).
    assert _extra_blocks(fake_llm) == "BROKEN WRAPPER BEFORE\none\ntwo"
    assert len(reported) == 2, reported
    assert any("test-plugin-0" in line and "wrapper broke" in line for line in reported)
    assert any("test-plugin-2" in line and "setup broke" in line for line in reported)
    assert all("\n" not in line and "chat_system_transform" in line for line in reported)


class _PickSpec:
    @pluggy.HookspecMarker("agentcli")(firstresult=True)
    def pick(self, input: dict[str, Any]) -> Any:
        """A plugin-defined hook whose first non-None result wins."""


class _Picker:
    def __init__(self, answer: Any, fail: bool = False) -> None:
        self.answer, self.fail, self.called = answer, fail, False

    @hookimpl
    def pick(self, input: dict[str, Any]) -> Any:
        self.called = True
        if self.fail:
            raise RuntimeError("picker broke")
        return self.answer


def test_a_firstresult_hook_returns_the_first_answer_past_a_broken_plugin() -> None:
    reported: list[str] = []
    plugins = Plugins(report=reported.append)
    plugins.pm.add_hookspecs(_PickSpec)
    broken, silent, first, second = _Picker(None, fail=True), _Picker(None), _Picker("a"), _Picker("b")
    for i, plugin in enumerate([broken, silent, first, second]):
        plugins.register(plugin, name=f"picker-{i}")
    assert plugins.hook.pick(input={}) == "a"
    assert broken.called and silent.called and not second.called
    assert reported == [
        "agentcli: plugin 'picker-0' failed in pick (RuntimeError: picker broke); its change was dropped"
    ]


# --------------------------------------------------------------------- AGENTCLI_LOAD_PLUGINS


def _plugin_source(text: str) -> str:
    return (
        "from agentcli.plugins import hookimpl\n\n"
        "@hookimpl\n"
        "def chat_system_transform(input, output):\n"
        f"    output['system'].append({text!r})\n"
    )


def _installed(workspace: Workspace) -> None:
    """Two configured plugins (modules on PYTHONPATH) and one installed with an entry point in the
    ``agentcli`` group, as a distribution on PYTHONPATH (its dist-info is what pip would write)."""
    site = workspace.root / "site"
    site.mkdir()
    (site / "plug_one.py").write_text(_plugin_source("PLUGIN ONE"))
    (site / "plug_two.py").write_text(_plugin_source("PLUGIN TWO"))
    (site / "alpha_plugin.py").write_text(_plugin_source("PLUGIN ALPHA"))
    info = site / "alpha_agentcli_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: alpha-agentcli-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[agentcli]\nalpha = alpha_plugin\n")
    workspace.extra_env["PYTHONPATH"] = str(site)
    workspace.write_config({"plugin": ["plug_one", "plug_two"]})


def _loaded(workspace: Workspace, fake_llm: FakeLLM, allow: str | None) -> set[str]:
    if allow is None:
        workspace.extra_env.pop("AGENTCLI_LOAD_PLUGINS", None)
    else:
        workspace.extra_env["AGENTCLI_LOAD_PLUGINS"] = allow
    fake_llm.push(Reply(text="answer"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "plugin" not in proc.stderr, proc.stderr  # nothing failed, nothing was reported
    system = "\n".join(_system(fake_llm.chat_requests()[-1].body))
    return {name for name in ("ONE", "TWO", "ALPHA") if f"PLUGIN {name}" in system}


def test_agentcli_load_plugins_loads_only_the_plugins_it_names(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _installed(workspace)
    assert _loaded(workspace, fake_llm, None) == {"ONE", "TWO", "ALPHA"}  # unset: all of them
    # Configured plugins by their spec, installed ones by entry-point or distribution name.
    assert _loaded(workspace, fake_llm, "plug_two, alpha") == {"TWO", "ALPHA"}
    assert _loaded(workspace, fake_llm, "plug_one,alpha-agentcli-plugin") == {"ONE", "ALPHA"}
    assert _loaded(workspace, fake_llm, "") == set()  # empty: none
