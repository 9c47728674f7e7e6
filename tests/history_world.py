"""The world the history fuzz (tests/test_history_fuzz.py) drives: agentcli's real session loop on a real
SQLite file, in this process, against the scripted server (tests/fakellm.py) speaking the provider's
wire — OpenAI-compatible chat completions, Anthropic's Messages API with thinking on, or DeepSeek's
reasoner — with the real read/write/edit tools, the task tool and its subagents, the memory plugin
(its ``memory_compact`` is the self-requested compaction) and, when asked, the real test MCP server.

The scripted model is a function of each request (``Model``): a subagent's requests, summary requests
and titles are told apart by what they carry, so parallel tasks need no ordering; the main session's
steps come from the plan the fuzz rule set. Every request the server receives is kept, and
``World.check`` runs the provider's validators (tests/provider_rules.py) over the new ones.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentcli.demo.anthropic_wire import AnthropicReply, signature_for
from agentcli.llm import anthropic as anthropic_wire
from agentcli.llm.events import ChatRequest
from agentcli.mcp.host import from_config
from agentcli.plugins.memory import make_plugin
from agentcli.session.loop import SessionLoop
from agentcli.session.model import resolve_model
from agentcli.session.options import LoopOptions
from agentcli.session.permission import PermissionPolicy
from agentcli.session.runtime import SessionRuntime
from agentcli.store.records import TextPart, UserMessage
from agentcli.store.store import Store
from agentcli.tools.base import Tool, ToolContext, ToolResult
from agentcli.tools.edit import EditTool
from agentcli.tools.read import ReadTool
from agentcli.tools.write import WriteTool
from agentcli.trusted_config import load_config
from tests import provider_rules
from tests.fakellm import (
    ErrorResponse,
    FakeLLM,
    Recorded,
    Reply,
    Response,
    ToolCall,
    Usage,
    is_summary_request,
)
from tests.provider_rules import Expect
from tests.workspace import make_workspace

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["AGENTCLI_LLM_PATH"] = "lean"  # the lean paths build each provider's own body

PROVIDERS = ("openai", "anthropic", "deepseek")
CONTEXT, OUTPUT = 100_000, 4_000
CHILD_MARK = "FUZZ-CHILD"
MCP_SERVER = Path(__file__).with_name("mcp_server.py")
BIG = "".join(f"line {i}: " + "x" * 60 + "\n" for i in range(680))  # ~48 KB: ~12k tokens once read
SMALL = "a small file\n"
# The bus events counted, to show what the sequences went through (agentcli.session.events).
NOTED = frozenset(
    {
        "Pruned",
        "CompactionFinished",
        "CompactionFailed",
        "CompactionSkipped",
        "InterruptedClosed",
        "Retrying",
        "ErrorOccurred",
        "SubagentToolUpdated",
    }
)
FILES = {"big1.txt": BIG, "big2.txt": BIG.replace("x", "y"), "small.txt": SMALL, "notes.md": "# notes\n"}


def _config(provider: str, base_url: str, mcp: bool) -> dict[str, Any]:
    limit = {"limit": {"context": CONTEXT, "output": OUTPUT}}
    providers = {
        "openai": ("fake/test-model", "fake", "test-model", {"npm": "@ai-sdk/openai-compatible"}, {}),
        "anthropic": (
            "anthropic/claude-sonnet-4-5",
            "anthropic",
            "claude-sonnet-4-5",
            {},
            {"options": {"thinking": {"type": "enabled", "budgetTokens": 1024}}},
        ),
        "deepseek": ("deepseek/fuzz-reasoner", "deepseek", "fuzz-reasoner", {}, {}),
    }
    model, name, model_id, extra, model_extra = providers[provider]
    config: dict[str, Any] = {
        "model": model,
        "provider": {
            name: {
                **extra,
                "options": {"baseURL": base_url, "apiKey": "sk-test"},
                "models": {model_id: {**limit, **model_extra}},
            }
        },
        # The fuzz's model repeats calls on purpose; the doom-loop stop would end most turns early.
        "permission": {"doom_loop": "allow"},
        "agent": {
            "helper": {"mode": "subagent", "description": "Helps", "prompt": f"{CHILD_MARK}: you help."}
        },
    }
    if mcp:
        config["mcp"] = {
            "t": {"type": "local", "command": [sys.executable, str(MCP_SERVER)], "timeout": 30_000}
        }
    return config


# --- a tool that runs until the turn is cancelled (Ctrl-C, or the process "killed" meanwhile) --------


class BlockParams(BaseModel):
    why: str = ""


class BlockTool(Tool[BlockParams]):
    name = "block"
    description = "Waits until the turn is cancelled."
    params = BlockParams

    def __init__(self) -> None:
        self.started = threading.Event()

    def execute(self, args: BlockParams, ctx: ToolContext) -> ToolResult:
        self.started.set()
        ctx.abort.wait(60)
        return ToolResult(output="stopped")


# --- the scripted model ------------------------------------------------------------------------


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return " ".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    if isinstance(system, str):
        return system
    return " ".join(str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system")


def _has_tool_results(body: dict[str, Any]) -> bool:
    for m in body.get("messages") or []:
        if m.get("role") == "tool":
            return True
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return True
    return False


class Model:
    """Answers each request: summaries, subagents and the main session's planned steps."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.plan: deque[Response] = deque()  # the main session's next steps
        self.summaries: deque[Response] = deque()  # the next summary requests' answers (default: a summary)
        self.expect = Expect()
        self.ids = itertools.count(1)
        self.lock = threading.Lock()

    def __call__(self, rec: Recorded) -> Response:
        with self.lock:
            if is_summary_request(rec.body):
                return self.summaries.popleft() if self.summaries else self.reply("## Goal\nfuzz summary")
            if CHILD_MARK in _system_text(rec.body):
                if _has_tool_results(rec.body):
                    return self.reply("the child found it", reasoning="done looking")
                return self.reply(calls=[("read", {"filePath": "small.txt"})], reasoning="child looks")
            return self.plan.popleft() if self.plan else self.reply("All done.")

    def reply(
        self,
        text: str = "",
        calls: list[tuple[str, Any]] = (),  # type: ignore[assignment]
        reasoning: str = "",
        redacted: bool = False,
        usage: int | None = None,
        delay: float = 0.0,
    ) -> Response:
        """A step as the provider streams it, its tool calls' ids and reasoning kept in ``expect``."""
        tool_calls = [ToolCall(name, args, id=f"toolu_fz{next(self.ids)}") for name, args in calls]
        data = [f"EmRED{tool_calls[0].id}"] if redacted and tool_calls else []  # one block per step
        for call in tool_calls:
            assert call.id is not None
            if self.provider == "deepseek" and reasoning:
                self.expect.reasoning[call.id] = reasoning
            if self.provider == "anthropic" and reasoning:
                self.expect.thinking[call.id] = (reasoning, signature_for(reasoning))
            if self.provider == "anthropic" and redacted:
                self.expect.redacted[call.id] = data[0]
        used = Usage(usage, 20) if usage is not None else None
        reply = Reply(text=text, reasoning=reasoning, tool_calls=tool_calls, usage=used, delay=delay)
        if self.provider != "anthropic":
            return reply
        return AnthropicReply(reply, redacted=data)

    def overflow(self) -> Response:
        """The provider answering that the request does not fit its context window."""
        if self.provider == "anthropic":
            return ErrorResponse(
                400,
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum",
                    },
                },
            )
        return ErrorResponse.context_length()


@dataclass
class Turn:
    """A turn running in a thread."""

    abort: threading.Event
    worker: threading.Thread | None = None
    failed: list[BaseException] = field(default_factory=list)

    def alive(self) -> bool:
        return self.worker is not None and self.worker.is_alive()

    def end(self) -> None:
        """Wait for the turn to end; its failure, if it failed, is raised here."""
        if self.worker is not None:
            self.worker.join(60)
        assert not self.alive(), "the turn never ended"
        if self.failed:
            raise self.failed[0]

    def cancel(self) -> None:
        """Ctrl-C: the turn is aborted and winds down."""
        self.abort.set()
        self.end()


# --- the world: one session, its store and the loop of the "process" running it --------------------


class World:
    def __init__(self, root: Path, server: FakeLLM, provider: str, mcp: bool) -> None:
        self.root, self.server, self.provider, self.mcp = root, server, provider, mcp
        self.model = Model(provider)
        self.server.on(lambda r: not r.title, self.model)
        self.ws = make_workspace(root, server.base_url)
        (self.ws.project / "opencode.json").write_text(json.dumps(_config(provider, server.base_url, mcp)))
        for name, text in FILES.items():
            (self.ws.project / name).write_text(text)
        self.db = root / "agentcli.db"
        self.block = BlockTool()
        self.typed: list[str] = []  # every prompt the user typed, in order
        self.checked = len(server.requests)  # the requests before this sequence's are not its own
        self.validated = 0  # requests validated, in this sequence
        self.invalid: list[str] = []
        self.host: Any = None
        self.events: Counter[str] = Counter()  # what happened, by bus event (the long run prints them)
        self.store, self.loop = self._open()
        self.sid = self.store.create_session(str(self.ws.project), self.loop.runtime.model.name).id

    def _open(self) -> tuple[Store, SessionLoop]:
        env = {
            "HOME": str(self.ws.home),
            "XDG_CONFIG_HOME": str(self.ws.home / ".config"),
            "AGENTCLI_TRUST_ALL": "1",
        }
        loaded = load_config(cwd=self.ws.project, env=env)
        model = resolve_model(loaded.config.model or "", loaded.config.providers_dict(), env={})
        store = Store(str(self.db))
        if self.mcp:
            self.host = from_config(
                loaded.config.mcp,
                directory=self.ws.project,
                log_dir=None,
                notify=lambda _line: None,
            )
        tools: dict[str, Any] = {t.name: t for t in (ReadTool(), WriteTool(), EditTool(), self.block)}
        runtime = SessionRuntime(
            store=store,
            config=loaded.config,
            model=model,
            options=LoopOptions(
                directory=self.ws.project, data_dir=self.root / "data", max_steps=40, mcp=self.host
            ),
            tools=tools,
            policy=PermissionPolicy.for_config(loaded, yes=True),
        )
        loop = SessionLoop(runtime)
        runtime.bus.subscribe(self._seen)
        assert runtime.plugins is not None
        runtime.plugins.register(make_plugin(), name="memory")
        return store, loop

    def _seen(self, event: Any) -> None:
        name = type(event).__name__
        if name in NOTED:
            self.events[name] += 1

    # --- what the user does ------------------------------------------------------------------

    def prompt(self, text: str, abort: threading.Event | None = None) -> None:
        self.typed.append(text)
        self.loop.prompt(self.sid, text, abort)
        self.join_title()

    def join_title(self) -> None:
        if self.loop.title_thread is not None:
            self.loop.title_thread.join(30)

    def prompt_in_thread(self, text: str) -> Turn:
        """A turn running in a thread, to be interrupted (its failure, if any, is raised by ``end``)."""
        turn = Turn(threading.Event())

        def run() -> None:
            try:
                self.prompt(text, turn.abort)
            except BaseException as exc:  # noqa: BLE001 - the turn's failure is the test's
                turn.failed.append(exc)

        turn.worker = threading.Thread(target=run, daemon=True)
        turn.worker.start()
        return turn

    def prompt_until_blocked(self, text: str) -> Turn:
        """A turn whose model calls ``block``: returned once the tool runs."""
        self.block.started.clear()
        turn = self.prompt_in_thread(text)
        while not self.block.started.wait(0.05):
            if not turn.alive():
                turn.end()
                raise AssertionError("the turn ended without running the tool")
        return turn

    def prompt_until_streaming(self, text: str) -> Turn:
        """A turn returned once its step has stored something of the answer streaming in (or once it
        has ended: the moment of the interruption is whatever the machine's load makes it)."""
        before = {m.id for m in self.store.messages(self.sid)}
        turn = self.prompt_in_thread(text)
        while turn.alive() and not any(
            m.parts and m.id not in before and m.role == "assistant" for m in self.store.messages(self.sid)
        ):
            time.sleep(0.02)
        return turn

    def crash_and_resume(self, turn: Turn) -> None:
        """The process killed while its tool runs: the database as it was at that moment is what the
        next process opens (SQLite's backup is a consistent copy; each write is its own transaction).
        The killed holder's lease has lapsed by then, as it does after its time-to-live."""
        copy = self.root / "crashed.db"
        src, dst = sqlite3.connect(self.db), sqlite3.connect(copy)
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
        turn.cancel()
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.db}{suffix}").unlink(missing_ok=True)
        shutil.move(copy, self.db)
        with sqlite3.connect(self.db) as conn:
            conn.execute("DELETE FROM session_lease")
        self.store, self.loop = self._open()

    def close(self) -> None:
        """The process ends (or is killed): its background summaries end with it. They are daemon threads
        a real exit takes down; here they are cancelled and waited for, else one could still send its
        request while the next sequence is being checked."""
        self.join_title()
        background = self.loop.runtime.background
        background.cancel_all()
        for thread in background.threads:
            thread.join(60)
        assert not any(t.is_alive() for t in background.threads), "a background summary never ended"
        if self.host is not None:
            self.host.close()
            self.host = None
        self.store.close()

    # --- the invariants -------------------------------------------------------------------------

    def check(self) -> list[str]:
        """Validate the requests received since the last check; the user's words all still stored."""
        new = [
            r
            for r in self.server.requests[self.checked :]
            if r.path.rstrip("/").endswith(("/messages", "/completions"))
        ]
        self.checked = len(self.server.requests)
        errors: list[str] = []
        for rec in new:
            errors += self.validate(rec.body)
        self.validated += len(new)
        stored = {
            p.text
            for m in self.store.messages(self.sid)
            if isinstance(m.info, UserMessage)
            for p in m.parts
            if isinstance(p, TextPart)
        }
        errors += [f"the user's words are gone from the store: {t!r}" for t in self.typed if t not in stored]
        self.invalid += errors
        return errors

    def validate(self, body: dict[str, Any]) -> list[str]:
        """The body against its provider's rules; a chat-completions body also as Anthropic gets it."""
        shape = self.provider
        errors = provider_rules.check(shape, body, self.model.expect)
        if shape != "anthropic":
            errors += provider_rules.anthropic(as_anthropic(body))
        return [f"{e}\n  in {json.dumps(_brief(body))[:3000]}" for e in errors]


def _brief(body: dict[str, Any]) -> dict[str, Any]:
    """The body with what is never the problem cut short (system prompt, tools), for the report."""

    def cut(m: dict[str, Any]) -> dict[str, Any]:
        return {**m, "content": str(m.get("content"))[:60] + "…"} if m.get("role") == "system" else m

    out = {k: v for k, v in body.items() if k not in ("tools", "system")}
    out["messages"] = [cut(m) for m in body.get("messages") or []]
    return out


def as_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body as agentcli's lean path would send it to Claude (the same messages)."""
    req = ChatRequest(model="anthropic/claude-sonnet-4-5", messages=body["messages"], tools=body.get("tools"))
    endpoint = anthropic_wire.endpoint(req, env={})
    assert endpoint is not None, "the lean path refused a Claude request"
    return endpoint.body
