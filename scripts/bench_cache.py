"""Prompt-cache benchmark: a 20-step tool turn (one `read` of a 3 KB file per step) with an Anthropic
model on the lean path, against the scripted server (tests/fakellm.py, on 127.0.0.1), with and without
the memory plugin, in a session whose earlier turns already hold about 130,000 tokens (what a long
session sends; a step then adds about 1,000).

Per step, two figures:
- prefix: the share of the request that is a byte-identical prefix of the previous step's request,
  the request written out in the order the provider caches it (tools, system blocks, then each content
  block of each message) with the cache_control marks left out (they move by design). Target: at least
  0.95 on every step that neither pruned nor compacted (none here does either).
- the modelled input bill at Anthropic's prices (claude-sonnet-4-5 in litellm's map: input, cache
  write 1.25x, cache read 0.1x) with the breakpoints agentcli set on the request, against none. The
  model: every breakpoint writes the prefix up to it to the cache; a request reads the longest cached
  prefix found at a breakpoint or up to 20 blocks before it, writes from there to its last
  breakpoint and pays the input price after it. Sizes are chars/4 of each block's JSON.

The memory plugin is measured three ways: as shipped (its figures in a reminder after the newest
message), with a band-only block in the system prompt (the alternative: changes only when the band
does), and as it was before (the exact figures in the system prompt). The scripted usage takes the
context from 65 % to 75 % of 200,000 tokens over the turn, so the band changes once (green → yellow).
"previous_reused" is the other way round: the share of the previous request the next one repeats.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["AGENTCLI_LLM_PATH"] = "lean"

from agentcli.llm import modelmap  # noqa: E402
from agentcli.plugins import hookimpl  # noqa: E402
from agentcli.plugins.memory import MemoryPlugin, block  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.permission import PermissionPolicy  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store.records import (  # noqa: E402
    AssistantMessage,
    StepFinishPart,
    StepStartPart,
    TextPart,
    ToolPart,
    ToolState,
    UserMessage,
    WithParts,
)
from agentcli.tools.registry import all_tools  # noqa: E402
from agentcli.trusted_config import load_config  # noqa: E402
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage, is_summary_request  # noqa: E402
from tests.workspace import make_workspace  # noqa: E402

STEPS = 20
CONTEXT = 200_000
HISTORY_TURNS = 60  # earlier turns, each a question, a read of an 8 KB file and an answer
MODEL = "anthropic/claude-sonnet-4-5"
PRICES = modelmap.entry("claude-sonnet-4-5") or {}
INPUT = float(PRICES.get("input_cost_per_token") or 3e-6)
WRITE = float(PRICES.get("cache_creation_input_token_cost") or INPUT * 1.25)
READ = float(PRICES.get("cache_read_input_token_cost") or INPUT * 0.1)
LOOKBACK = 20  # blocks Anthropic looks back from a breakpoint for an earlier cache entry


class BandOnly(MemoryPlugin):
    """The alternative: a block in the system prompt that changes only when the band changes."""

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        if self.context is None or not input.get("session_id"):
            return
        band = block.band(self.context.session.context(input["session_id"]).percent)
        advice = block.ADVICE[band]
        text = f"{block.MARKERS[band]} Context: {block.STATUS[band]}" + (f"\n{advice}" if advice else "")
        output["system"].insert(1, text)


class Before(MemoryPlugin):
    """As the plugin was before: the exact figures in the system prompt at every step."""

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        if self.context is None or not input.get("session_id"):
            return
        output["system"].insert(1, block.render(self.context.session.context(input["session_id"])))


def _source(n: int) -> str:
    """A file of about 3 KB for step ``n`` to read."""
    body = "".join(
        f"def handler_{n}_{i}(event, context):\n    return process(event, retries={i}, step={n})\n\n"
        for i in range(40)
    )
    return f'"""Module {n}."""\n\n{body}'


def history(sid: str, model: str) -> list[WithParts]:
    """Earlier turns of the session (about 130,000 tokens as sent)."""
    out: list[WithParts] = []
    for n in range(HISTORY_TURNS):
        user = UserMessage(id=ids.ascending("msg"), session_id=sid, model=model)
        answer = AssistantMessage(
            id=ids.ascending("msg"), session_id=sid, parent_id=user.id, model=model, finish="stop"
        )
        state = ToolState(
            status="completed", input={"filePath": f"old_{n}.py"}, output=_source(n) * 2, title=f"old_{n}.py"
        )
        out += [
            WithParts(
                info=user,
                parts=[
                    TextPart(id=ids.ascending("prt"), session_id=sid, message_id=user.id, text=f"look at {n}")
                ],
            ),
            WithParts(
                info=answer,
                parts=[
                    StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=answer.id),
                    ToolPart(
                        id=ids.ascending("prt"),
                        session_id=sid,
                        message_id=answer.id,
                        call_id=f"old_{n}",
                        tool="read",
                        state=state,
                    ),
                    TextPart(
                        id=ids.ascending("prt"), session_id=sid, message_id=answer.id, text=f"Module {n}."
                    ),
                    StepFinishPart(
                        id=ids.ascending("prt"), session_id=sid, message_id=answer.id, reason="stop"
                    ),
                ],
            ),
        ]
    return out


def claude_loop(tmp: Path, server: FakeLLM, context: int, extra: dict[str, Any] | None = None) -> SessionLoop:
    """A session loop in a fresh project whose model is Claude on the lean path to ``server``."""
    tmp.mkdir()
    ws = make_workspace(tmp, server.base_url)
    ws.write_config(
        {
            "model": MODEL,
            "provider": {
                "anthropic": {
                    "options": {"baseURL": server.base_url, "apiKey": "sk-ant-bench"},
                    "models": {"claude-sonnet-4-5": {"limit": {"context": context, "output": 8_000}}},
                }
            },
            **(extra or {}),
        }
    )
    (ws.project / "AGENTS.md").write_text("Keep handlers small. Run the tests after every change.\n" * 20)
    home = ws.home
    loaded = load_config(
        cwd=ws.project,
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "AGENTCLI_TRUST_ALL": "1"},
    )
    model = resolve_model(MODEL, loaded.config.providers_dict(), env={})
    return SessionLoop(
        SessionRuntime(
            store=ws.store(),
            config=loaded.config,
            model=model,
            options=LoopOptions(directory=ws.project, data_dir=tmp / "data"),
            tools={t.name: t for t in all_tools([])},
            policy=PermissionPolicy(yes=True),
        )
    )


def run_turn(tmp: Path, server: FakeLLM, plugin: Any | None) -> list[dict[str, Any]]:
    """One 20-step tool turn; the request bodies the server received, in order."""
    loop = claude_loop(tmp, server, CONTEXT)
    project = loop.runtime.options.directory
    model = loop.runtime.model
    if plugin is not None:
        loop.runtime.plugins.register(plugin, name="memory")  # type: ignore[union-attr]
    sid = loop.runtime.store.create_session(str(project), model.name).id
    loop.runtime.store.import_messages(history(sid, model.name))
    loop.runtime.store.update_session(sid, title="bench", context_tokens=int(CONTEXT * 0.65))
    replies = []
    for n in range(STEPS - 1):
        (project / f"mod_{n}.py").write_text(_source(n))
        used = int(CONTEXT * (0.65 + 0.10 * n / (STEPS - 1)))
        read = ToolCall("read", {"filePath": str(project / f"mod_{n}.py")})
        replies.append(Reply(text=f"Reading module {n}.", tool_calls=[read], usage=Usage(used, 40)))
    replies.append(Reply(text="All handlers read.", usage=Usage(int(CONTEXT * 0.75), 20)))
    before = len(server.chat_requests())
    server.push(*replies)
    loop.prompt(sid, "Read every module and tell me what the handlers do.")
    if loop.title_thread is not None:
        loop.title_thread.join(10)
    loop.runtime.store.close()
    return [r.body for r in server.chat_requests()[before:]]


def blocks(body: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The request as the provider caches it: its blocks' JSON (marks left out) and the indexes of
    the blocks that carry a breakpoint."""
    out: list[str] = []
    marked: list[int] = []

    def add(item: Any) -> None:
        if isinstance(item, dict) and "cache_control" in item:
            marked.append(len(out))
            item = {k: v for k, v in item.items() if k != "cache_control"}
        out.append(json.dumps(item, sort_keys=True))

    add({"tools": body.get("tools") or []})
    for item in body.get("system") or []:
        add(item)
    for message in body["messages"]:
        content = message["content"]
        for item in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            add({"role": message["role"], **item})
    return out, marked


def common_prefix(previous: list[str], current: list[str]) -> tuple[int, int, int]:
    """(characters the two requests share from the start, length of the previous, of the current)."""
    a, b = "".join(previous), "".join(current)
    same = os.path.commonprefix([a, b])
    return len(same), len(a), len(b)


def bill_each(bodies: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Dollars of input of each request in turn: with agentcli's breakpoints, and with none."""
    cached: set[str] = set()
    out: list[tuple[float, float]] = []
    for body in bodies:
        parts, marked = blocks(body)
        sizes = [len(p) / 4 for p in parts]
        keys = [str(hash(tuple(parts[: i + 1]))) for i in range(len(parts))]
        total = sum(sizes)
        read_upto = 0
        for mark in marked:
            for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if keys[j] in cached:
                    read_upto = max(read_upto, j + 1)
                    break
        last = (marked[-1] + 1) if marked else 0
        read = sum(sizes[:read_upto])
        write = sum(sizes[read_upto:last]) if last > read_upto else 0.0
        out.append((read * READ + write * WRITE + (total - read - write) * INPUT, total * INPUT))
        cached.update(keys[m] for m in marked)
    return out


def bill(bodies: list[dict[str, Any]]) -> tuple[float, float]:
    """Dollars of input for the turn: with agentcli's breakpoints, and with none."""
    each = bill_each(bodies)
    return sum(c for c, _ in each), sum(u for _, u in each)


# --- the summary request (issue 28) ---------------------------------------------------------------

SESSION_STEPS = 150
SESSION_TURNS = 15  # of 10 steps each: at most one automatic compaction per turn is the rule
SESSION_CONTEXT = 60_000  # a window that a 150-step session outgrows three times


def run_session(tmp: Path, server: FakeLLM, request: str) -> list[dict[str, Any]]:
    """A 150-step Claude session (15 turns of nine reads and an answer), compacting as it fills;
    ``request``: the summary request's shape (``compaction.request``). The request bodies, in order."""
    loop = claude_loop(tmp, server, SESSION_CONTEXT, {"compaction": {"request": request}})
    project, store = loop.runtime.options.directory, loop.runtime.store
    sid = store.create_session(str(project), loop.runtime.model.name).id
    store.update_session(sid, title="bench")
    summary = Reply(text="## Objective\n- read every module\n\n## Work State\n- reading modules in order")
    rule = server.on(lambda r: is_summary_request(r.body), summary)
    before = len(server.chat_requests())
    per_turn = SESSION_STEPS // SESSION_TURNS
    for turn in range(SESSION_TURNS):
        replies = []
        for k in range(per_turn - 1):
            n = turn * per_turn + k
            (project / f"mod_{n}.py").write_text(_source(n))
            read = ToolCall("read", {"filePath": str(project / f"mod_{n}.py")})
            replies.append(Reply(text=f"Reading module {n}.", tool_calls=[read]))
        replies.append(Reply(text=f"Modules up to {turn * per_turn + per_turn - 2} read."))
        server.push(*replies)
        loop.prompt(sid, f"Read the next {per_turn - 1} modules.")
    server.off(rule)
    if loop.title_thread is not None:
        loop.title_thread.join(10)
    store.close()
    return [r.body for r in server.chat_requests()[before:]]


def summary_figures() -> None:
    """The summary request's cached share, and the bill of a 150-step session, transcript vs cache."""
    results: dict[str, tuple[list[dict[str, Any]], list[int]]] = {}
    with FakeLLM() as server, tempfile.TemporaryDirectory() as tmp:
        for kind in ("transcript", "cache"):
            bodies = run_session(Path(tmp) / kind, server, kind)
            summaries = [i for i, b in enumerate(bodies) if is_summary_request(b)]
            results[kind] = (bodies, summaries)
    bills: dict[str, tuple[float, float]] = {}
    for kind, (bodies, summaries) in results.items():
        parsed = [blocks(b)[0] for b in bodies]
        shares = []
        for i in summaries:
            best = max(common_prefix(parsed[j], parsed[i])[0] for j in range(i))
            shares.append(best / len("".join(parsed[i])))
        costs = [c for c, _ in bill_each(bodies)]
        bills[kind] = (sum(costs), sum(costs[i] for i in summaries))
        print(f"summary_{kind}.requests: {len(bodies)}")
        print(f"summary_{kind}.compactions: {len(summaries)}")
        print(
            f"summary_{kind}.cached_share: {' '.join(f'{s:.3f}' for s in shares)} (target >= 0.9 for cache)"
        )
        print(f"summary_{kind}.summary_requests_bill_usd: {bills[kind][1]:.4f}")
        print(f"summary_{kind}.session_bill_usd: {bills[kind][0]:.4f}")
    (old, old_s), (new, new_s) = bills["transcript"], bills["cache"]
    print(f"summary.session_bill_ratio_transcript_over_cache: {old / new:.3f}")
    print(f"summary.summary_bill_ratio_transcript_over_cache: {old_s / new_s:.2f}")


def main() -> None:
    if "--summary" in sys.argv[1:]:
        summary_figures()
        return
    variants: list[tuple[str, Any]] = [
        ("plain", None),
        ("memory", MemoryPlugin()),
        ("memory_band_only", BandOnly()),
        ("memory_before", Before()),
    ]
    with FakeLLM() as server, tempfile.TemporaryDirectory() as tmp:
        for name, plugin in variants:
            bodies = run_turn(Path(tmp) / name, server, plugin)
            assert len(bodies) == STEPS, f"{name}: {len(bodies)} requests"
            parsed = [blocks(b)[0] for b in bodies]
            pairs = [common_prefix(p, c) for p, c in zip(parsed, parsed[1:], strict=False)]
            shares = [same / now for same, _, now in pairs]
            for step, share in enumerate(shares, start=2):
                print(f"{name}.step_{step:02d}.prefix_share: {share:.3f}")
            print(f"{name}.prefix_share_min: {min(shares):.3f}")
            print(f"{name}.steps_below_0.95: {sum(s < 0.95 for s in shares)}")
            print(f"{name}.previous_reused_min: {min(same / before for same, before, _ in pairs):.3f}")
            marks = max(len(blocks(b)[1]) for b in bodies)
            print(f"{name}.breakpoints_max: {marks}")
            cached, uncached = bill(bodies)
            print(f"{name}.input_bill_breakpoints_usd: {cached:.4f}")
            print(f"{name}.input_bill_no_breakpoints_usd: {uncached:.4f}")
            print(f"{name}.input_bill_ratio_none_over_breakpoints: {uncached / cached:.2f}")


if __name__ == "__main__":
    main()
