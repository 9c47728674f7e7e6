"""An in-process session for internal tests: a real SQLite store, the real SessionLoop wired from a
real opencode.json, and the scripted server (tests/fakellm.py) reached through litellm.

    h = Harness.make(tmp_path, fake_llm, context=20, output=10)
    fake_llm.push(Reply(text="hi"))
    h.loop.prompt(h.sid, "hello")
    assert h.of(events.CompactionFinished)  # every bus event is kept in h.events
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.session.loop import SessionLoop
from agentcli.session.model import resolve_model
from agentcli.session.options import LoopOptions
from agentcli.session.permission import PermissionPolicy
from agentcli.session.runtime import SessionRuntime
from agentcli.store.records import AssistantMessage, SessionInfo, UserMessage, WithParts
from agentcli.store.store import Store
from agentcli.trusted_config import load_config
from tests.fakellm import FakeLLM
from tests.workspace import make_workspace

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@dataclass
class Harness:
    tmp: Path
    project: Path
    store: Store
    loop: SessionLoop
    sid: str
    events: list[Any] = field(default_factory=list)

    @classmethod
    def make(
        cls,
        tmp: Path,
        llm: FakeLLM,
        *,
        plugins: list[Any] | None = None,
        tools: dict[str, Any] | None = None,
        policy: PermissionPolicy | None = None,
        max_steps: int = 200,
        session_id: str | None = None,
        **project: Any,
    ) -> Harness:
        """``session_id``: a fixed id (e.g. test_history's ``SES``, to store records built there)."""
        ws = make_workspace(tmp, llm.base_url)  # the same project layout as the e2e tests
        ws.write_config(**project)
        path, home = ws.project, ws.home
        loaded = load_config(
            cwd=path,
            env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "AGENTCLI_TRUST_ALL": "1"},
        )
        model = resolve_model("fake/test-model", loaded.config.providers_dict(), env={})
        store = ws.store()
        loop = SessionLoop(
            SessionRuntime(
                store=store,
                config=loaded.config,
                model=model,
                options=LoopOptions(directory=path, data_dir=tmp / "data", max_steps=max_steps),
                tools=tools if tools is not None else {},
                policy=policy or PermissionPolicy(),
            )
        )
        assert loop.runtime.plugins is not None
        for i, plugin in enumerate(plugins or []):
            loop.runtime.plugins.register(plugin, name=f"test-plugin-{i}")
        if session_id is None:
            session_id = store.create_session(str(path), model.name).id
        else:
            store.put_session(SessionInfo(id=session_id, directory=str(path), model=model.name))
        harness = cls(tmp=tmp, project=path, store=store, loop=loop, sid=session_id)
        loop.runtime.bus.subscribe(harness.events.append)
        return harness

    @property
    def runtime(self) -> SessionRuntime:
        """What the loop's turns share: the model, plugins, bus, tools, view."""
        return self.loop.runtime

    # --- reading back ----------------------------------------------------------------------

    def messages(self) -> list[WithParts]:
        return self.store.messages(self.sid)

    def assistants(self) -> list[WithParts]:
        return [m for m in self.messages() if isinstance(m.info, AssistantMessage)]

    def summaries(self) -> list[WithParts]:
        return [m for m in self.assistants() if m.info.summary]  # type: ignore[union-attr]

    def users(self) -> list[WithParts]:
        return [m for m in self.messages() if isinstance(m.info, UserMessage)]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def join_title(self) -> None:
        if self.loop.title_thread is not None:
            self.loop.title_thread.join(10)


def counting(it: Iterator[WithParts], counter: list[int]) -> Iterator[WithParts]:
    """Pass messages through, counting how many the consumer actually pulled."""
    for msg in it:
        counter[0] += 1
        yield msg
