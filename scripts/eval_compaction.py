"""A probe evaluation of compaction (Factory-style): a scripted long task, N compactions, then probe
questions — which files changed, what failed, what the user asked for, what is next — answered by a
model and scored against the session's records.

    python scripts/eval_compaction.py                        # the scripted model (no key, no network)
    python scripts/eval_compaction.py --model ollama/qwen3:8b --api-base http://127.0.0.1:11434
    python scripts/eval_compaction.py --model anthropic/claude-sonnet-4-5 --compactions 5

The task itself is always scripted (the bundled scripted server plays the working model: real tools
on a scratch project), so every run has the same history. ``--model`` writes the summaries and
answers the probes. With the scripted model the summaries remember nothing and the probe answer is
everything the model was sent (a perfect reader): the score then measures what survives compaction
in the context at all, and ``--compare`` runs again with the carryover (ledger, the user's words)
turned off.

A probe item scores when the answer names it (case-insensitive): a changed file by path or name, a
failed command by the test it ran, a user request by its ticket id, an open task by its ticket id.
Prints one figure per line: ``name: value``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agentcli.demo.scripted_server import (  # noqa: E402
    FakeLLM,
    Recorded,
    Reply,
    ToolCall,
    Usage,
    is_summary_request,
)
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.permission import PermissionPolicy  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.store.records import AssistantMessage, ToolPart, WithParts  # noqa: E402
from agentcli.store.store import Store  # noqa: E402
from agentcli.tools.registry import all_tools  # noqa: E402
from agentcli.trusted_config import load_config  # noqa: E402

SCRIPTED = "scripted"
USELESS = "## Objective\n- (none)\n\n## Next Move\n1. (none)"
RULES = "RULE-A: always run the tests with `pytest -q`. RULE-B: never edit anything under vendor/."
PROBE = (
    "PROBE: answer from what you know of this session, in four numbered sections. "
    "1. Which files were changed (created or edited)? 2. What failed (commands or steps that did not "
    "succeed)? 3. What did the user ask for, including standing rules? 4. What is next (open tasks)? "
    "Be specific: exact paths, commands, test names and ticket ids. Do not call tools."
)
SMALL = Usage(400, 20)
TICKET = re.compile(r"\b(?:T-\d+|RULE-[A-Z])\b")
TEST_NAME = re.compile(r"test_\w+")


def _calls(*calls: ToolCall) -> Reply:
    return Reply(tool_calls=list(calls), usage=SMALL)


def _bash(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "run"})


def _check(i: int, passes: bool) -> str:
    word, code = ("1 passed", 0) if passes else (f"FAILED test_feature_{i}", 1)
    return (
        f"python -c \"import sys; print('{word}'); sys.exit({code})\"  # pytest -q tests/test_feature_{i}.py"
    )


def segment(i: int, segments: int) -> tuple[str, list[Reply]]:
    """Ticket ``i`` of the task: the user's request and the working model's scripted steps."""
    path = f"src/feature_{i}.py"
    ask = f"Ticket T-{i}: add feature {i} in {path} and make tests/test_feature_{i}.py pass."
    if i == 1:
        ask = f"{RULES}\n\n{ask}"
    todos = [
        {"content": f"T-{j}: feature {j}", "status": "completed" if j <= i else "pending", "priority": "high"}
        for j in range(1, segments + 2)
    ]
    steps = [
        _calls(ToolCall("write", {"filePath": path, "content": f"def feature_{i}():\n    return {i}\n"})),
        _calls(_bash(_check(i, passes=False))),
        _calls(
            ToolCall("edit", {"filePath": path, "oldString": f"return {i}", "newString": f"return {i * 10}"})
        ),
    ]
    if i % 2 == 0:  # even tickets get fixed; odd ones stay failing
        steps.append(_calls(_bash(_check(i, passes=True))))
    steps += [
        _calls(ToolCall("todowrite", {"todos": todos})),
        Reply(text=f"T-{i} done for now.", usage=SMALL),
    ]
    return ask, steps


# --- what the records say the answers are ---------------------------------------------------------


@dataclass
class Expected:
    files: set[str]
    failed: set[str]  # test names of commands that exited non-zero
    asked: set[str]  # ticket and rule ids the user gave
    next: set[str]  # ticket ids of open todos


def expected(messages: list[WithParts]) -> Expected:
    tools = [
        p
        for m in messages
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]
    done = [p for p in tools if p.state.status == "completed"]
    files = {str(p.state.input["filePath"]) for p in done if p.tool in ("edit", "write")}
    failed = {
        name
        for p in done
        if p.tool == "bash" and p.state.metadata.get("exit")
        for name in TEST_NAME.findall(str(p.state.input.get("command", "")))
    }
    asked = {
        t for m in messages if m.role == "user" for t in TICKET.findall(m.text()) if "PROBE" not in m.text()
    }
    todos = next((p.state.input["todos"] for p in reversed(done) if p.tool == "todowrite"), [])
    open_ = {
        t
        for item in todos
        if item["status"] not in ("completed", "cancelled")
        for t in TICKET.findall(item["content"])
    }
    return Expected(files, failed, asked, open_)


def _score(items: set[str], answer: str, match: Any = None) -> float:
    if not items:
        return 1.0
    low = answer.lower()
    hits = [i for i in items if (match(i, low) if match else i.lower() in low)]
    return len(hits) / len(items)


def _file_named(path: str, answer: str) -> bool:
    return path.lower() in answer or Path(path).name.lower() in answer


def scores(exp: Expected, answer: str) -> dict[str, float]:
    out = {
        "files_changed": _score(exp.files, answer, _file_named),
        "failures": _score(exp.failed, answer),
        "user_requests": _score(exp.asked, answer),
        "next_steps": _score(exp.next, answer),
    }
    out["overall"] = sum(out.values()) / len(out)
    return out


# --- running it -----------------------------------------------------------------------------------


def _echo(rec: Recorded) -> Reply:
    """The scripted model's probe answer: everything it was sent (a perfect reader of its context)."""
    sent = [m.get("content") for m in rec.body.get("messages", []) if m.get("role") != "system"]
    return Reply(text=json.dumps(sent, ensure_ascii=False), usage=SMALL)


def _is_summary(rec: Recorded) -> bool:
    return is_summary_request(rec.body)


def _is_probe(rec: Recorded) -> bool:
    messages = rec.body.get("messages") or [{}]
    return "PROBE:" in str(messages[-1].get("content"))


def _loop(
    project: Path, home: Path, store: Store, model: Any, *, ledger: bool, isolated: bool
) -> SessionLoop:
    """``isolated``: none of the user's own config (the scripted run); else their providers count."""
    base = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")} if isolated else dict(os.environ)
    loaded = load_config(cwd=project, env={**base, "AGENTCLI_TRUST_ALL": "1"})
    config = loaded.config.model_copy(deep=True)
    config.compaction.ledger = ledger
    task = resolve_model("fake/worker", config.providers_dict(), env={})
    loop = SessionLoop(
        SessionRuntime(
            store=store,
            config=config,
            model=task if model is None else model,
            options=LoopOptions(directory=project, data_dir=home / "data"),
            tools={t.name: t for t in all_tools()},
            policy=PermissionPolicy(yes=True),
        )
    )
    return loop


def run(model_name: str, compactions: int, *, ledger: bool, api_base: str | None) -> dict[str, float]:
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        (project / ".git").mkdir(parents=True)
        home.mkdir()
        provider = {"options": {"baseURL": llm.base_url, "apiKey": "sk-scripted"}}
        provider["models"] = {"worker": {"limit": {"context": 128_000, "output": 8_000}}}
        (project / "opencode.json").write_text(
            json.dumps({"provider": {"fake": {"npm": "@ai-sdk/openai-compatible", **provider}}})
        )
        store = Store(Path(tmp) / "eval.db")
        scripted = model_name == SCRIPTED
        worker = _loop(project, home, store, None, ledger=ledger, isolated=scripted)
        if scripted:
            llm.on(_is_summary, Reply(text=USELESS, usage=SMALL))
            llm.on(_is_probe, _echo)
            judge = worker.runtime.model
        else:
            judge = resolve_model(model_name, worker.runtime.config.providers_dict(), api_base=api_base)
        worker.runtime.compaction_model = judge
        sid = store.create_session(str(project), worker.runtime.model.name).id
        for i in range(1, compactions + 1):
            ask, steps = segment(i, compactions)
            llm.push(*steps)
            worker.prompt(sid, ask)
            if not worker.compact(sid):
                raise SystemExit(f"compaction {i} did not happen")
        prober = _loop(project, home, store, judge, ledger=ledger, isolated=scripted)
        prober.runtime.tools = {}  # the probe is answered from memory
        answer = prober.prompt(sid, PROBE)
        text = store.get_message(answer.id).text() if answer else ""
        got = scores(expected(store.messages(sid)), text)
        store.close()
        return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=SCRIPTED, help="the model that summarises and answers (default: scripted)"
    )
    parser.add_argument("--api-base", default=None, help="base URL of a local OpenAI-compatible server")
    parser.add_argument("--compactions", type=int, default=5)
    parser.add_argument("--compare", action="store_true", help="also run with the carryover turned off")
    args = parser.parse_args(argv)
    if args.compactions < 1:
        parser.error("--compactions must be at least 1")
    print(f"model: {args.model}")
    print(f"compactions: {args.compactions}")
    for name, value in run(args.model, args.compactions, ledger=True, api_base=args.api_base).items():
        print(f"score_{name}: {value:.2f}")
    if args.compare:
        off = run(args.model, args.compactions, ledger=False, api_base=args.api_base)
        for name, value in off.items():
            print(f"score_{name}_without_carryover: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
