"""A user's world for end-to-end tests: a project directory, a private HOME and database, and
`agentcli` run as a subprocess the way a user runs it, pointed at the scripted server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.store.store import Store
from tests import zygote
from tests.dbs import database_for_harness


def agentcli_argv() -> list[str]:
    exe = shutil.which("agentcli", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "agentcli"]


@dataclass
class Workspace:
    root: Path
    project: Path
    home: Path
    db: Path
    base_url: str
    extra_env: dict[str, str] = field(default_factory=dict)
    db_url: str = ""  # what AGENTCLI_DB says: the file ``db``, or a PostgreSQL URL (tests/dbs.py)

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "AGENTCLI", "XDG_"))}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            AGENTCLI_DB=self.db_url or str(self.db),
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            NO_COLOR="1",
            COLUMNS="120",
            # The harness's own project config (a provider baseURL) needs trust; tests of trust unset it.
            AGENTCLI_TRUST_ALL="1",
        )
        if os.environ.get("AGENTCLI_LLM_PATH"):  # run the CLI tests on the path under test (lean or litellm)
            env["AGENTCLI_LLM_PATH"] = os.environ["AGENTCLI_LLM_PATH"]
        env.update(self.extra_env)
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
            env.pop(key, None)
        return env

    def write_config(
        self,
        extra: dict[str, Any] | None = None,
        *,
        context: int = 100_000,
        output: int = 8_000,
        input_limit: int = 0,
        images: bool = False,
    ) -> dict[str, Any]:
        """The project's opencode.json: the fake model (taking images if ``images``) and ``extra``."""
        limit: dict[str, int] = {"context": context, "output": output}
        if input_limit:
            limit["input"] = input_limit
        model: dict[str, Any] = {"limit": limit}
        if images:
            model["modalities"] = {"input": ["text", "image"]}
        config: dict[str, Any] = {
            "model": "fake/test-model",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": self.base_url, "apiKey": "sk-test"},
                    "models": {"test-model": model},
                }
            },
        }
        for key, value in (extra or {}).items():
            config[key] = value
        (self.project / "opencode.json").write_text(json.dumps(config, indent=2))
        return config

    def run(
        self, *args: str, timeout: float = 60, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return zygote.run(  # subprocess.run, the child forked from a started one (tests/zygote.py)
            [*agentcli_argv(), *args],
            cwd=self.project,
            env=self.env,
            text=True,
            timeout=timeout,
            input="" if input is None else input,  # never the test runner's own stdin
        )

    def store(self) -> Store:
        return Store(self.db_url or self.db)

    def seed_turns(self, llm: Any, turns: list[tuple[str, Any]]) -> str:
        """Play setup turns in-process (the real loop on the same database and project, reached
        through litellm like the CLI) so a test spends its subprocess runs on the turn under test.
        Continues the latest session of the project, or starts one. Returns the session id."""

        loop = self._loop()
        store = loop.runtime.store
        latest = store.latest_session(str(self.project))
        sid = latest.id if latest else store.create_session(str(self.project), loop.runtime.model.name).id
        for question, reply in turns:
            llm.push(reply)
            loop.prompt(sid, question)
            if loop.title_thread is not None:
                loop.title_thread.join(10)
        store.close()
        return sid

    def seed_compaction(self, llm: Any, summary: Any, session_id: str) -> None:
        """A manual compaction played in-process (like ``seed_turns``), answered with ``summary``."""
        loop = self._loop()
        llm.push(summary)
        assert loop.compact(session_id)
        loop.runtime.store.close()

    def _loop(self) -> Any:
        from agentcli.session.loop import SessionLoop
        from agentcli.session.model import resolve_model
        from agentcli.session.options import LoopOptions
        from agentcli.session.runtime import SessionRuntime
        from agentcli.trusted_config import load_config

        loaded = load_config(cwd=self.project, env=self.env)
        assert loaded.config.model
        model = resolve_model(loaded.config.model, loaded.config.providers_dict(), env={})
        return SessionLoop(
            SessionRuntime(
                store=self.store(),
                config=loaded.config,
                model=model,
                options=LoopOptions(directory=self.project, data_dir=self.home / "data"),
            )
        )


def make_workspace(tmp_path: Path, base_url: str) -> Workspace:
    project = tmp_path / "project"
    home = tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / ".git").mkdir()  # a repo root, so config and instruction lookups stop here
    return Workspace(
        root=tmp_path,
        project=project,
        home=home,
        db=tmp_path / "agentcli.db",
        base_url=base_url,
        db_url=database_for_harness(tmp_path),
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("agentcli: error:")]
    assert errors, proc.stderr
    return errors[0]


def tool_statuses(ws: Workspace) -> list[str]:
    """The status of every tool call of the workspace's one session, in order."""
    from agentcli.store.records import AssistantMessage, ToolPart

    store = ws.store()
    [session] = store.list_sessions()
    return [
        p.state.status
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]
