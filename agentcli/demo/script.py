"""What ``agentcli demo`` plays: a scratch project and a scripted conversation about it.

The replies (and the token usage they report, as a provider would) are canned; everything else is
real — the tools read and edit the files, the loop prunes and compacts, the store keeps the session.
The usage figures are chosen so that one session shows the whole context story in a few turns: the
logs fill the window, old outputs are pruned, then an automatic compaction moves onto a summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentcli.demo.scripted_server import Reply, ToolCall, Usage

CONTEXT = 128_000  # the scripted model's window; auto-compaction fires at CONTEXT - OUTPUT
OUTPUT = 8_000
TITLE = "Demo: a typo, slow logs and a full window"
LOG_FILES = 6  # read in one turn: enough tool output (> 60k tokens) for pruning to apply later
ARCHIVE_FILES = 3
LOG_LINES = 640  # ~44 KB each: under the read tool's 50 KB cap, ~11k tokens

HELLO = """def greet(name: str) -> str:
    return "Helo, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
"""


@dataclass
class DemoTurn:
    prompt: str
    replies: list[Reply] = field(default_factory=list)


def _log(index: int, archive: bool = False) -> str:
    day = 10 + index
    lines = []
    for n in range(LOG_LINES):
        slow = n % 37 == 0
        ms = 1800 + (n * 7) % 900 if slow else 20 + (n * 13) % 60
        level = "WARN" if slow else "INFO"
        path = "/api/report" if slow else "/api/items"
        lines.append(
            f"2026-11-{day:02d}T{n // 60:02d}:{n % 60:02d}:00Z {level} GET {path} {ms}ms"
            f" pool=db-{n % 4} req={index}-{n:04d}"
        )
    if not archive:
        lines.append(f"2026-11-{day:02d}T23:59:00Z ERROR db pool exhausted (size=4, waiting=31)")
    return "\n".join(lines) + "\n"


def make_project(root: Path) -> None:
    """The scratch project: a script with a typo and a week of service logs."""
    (root / "logs" / "archive").mkdir(parents=True, exist_ok=True)
    (root / "hello.py").write_text(HELLO)
    for i in range(1, LOG_FILES + 1):
        (root / "logs" / f"app-{i}.log").write_text(_log(i))
    for i in range(1, ARCHIVE_FILES + 1):
        (root / "logs" / "archive" / f"app-{i}.log").write_text(_log(i, archive=True))


def _u(prompt: int, completion: int = 120) -> Usage:
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


SUMMARY = """## Objective
- Fix the greeting typo in hello.py; find why the service got slow.

## Important Details
- /api/report calls take 1.8–2.7 s; every log day ends with "db pool exhausted (size=4)".

## Work State
- hello.py fixed and checked (prints "Hello, world!").
- NOTES.md holds the incident note; the archive shows the same slow calls a week earlier.

## Next Move
- Raise the db pool size and move /api/report off the request path.

## Relevant Files
- `hello.py`, `NOTES.md`, `logs/app-*.log`, `logs/archive/app-*.log`
"""


def turns(root: Path, pace: float) -> list[DemoTurn]:
    """The scripted conversation. ``pace``: seconds between streamed chunks (0: instant)."""

    def say(text: str, usage: Usage) -> Reply:
        return Reply(text=text, usage=usage, delay=pace, chunk_size=6)

    def call(*calls: ToolCall, usage: Usage) -> Reply:
        return Reply(tool_calls=list(calls), usage=usage, delay=pace / 4)

    hello = str(root / "hello.py")
    logs = [str(root / "logs" / f"app-{i}.log") for i in range(1, LOG_FILES + 1)]
    archive = [str(root / "logs" / "archive" / f"app-{i}.log") for i in range(1, ARCHIVE_FILES + 1)]
    return [
        DemoTurn(
            "Fix the typo in hello.py's greeting.",
            [
                call(ToolCall("read", {"filePath": hello}), usage=_u(3_100, 40)),
                call(
                    ToolCall("edit", {"filePath": hello, "oldString": '"Helo, "', "newString": '"Hello, "'}),
                    usage=_u(3_400, 60),
                ),
                call(
                    ToolCall("bash", {"command": "python3 hello.py", "description": "Run the script"}),
                    usage=_u(3_700, 30),
                ),
                say(
                    "Fixed: `greet` now says **Hello**, and `python3 hello.py` prints `Hello, world!`.",
                    _u(3_900, 30),
                ),
            ],
        ),
        DemoTurn(
            "The service got slow this week. The logs are in logs/ — why?",
            [
                call(*(ToolCall("read", {"filePath": p}) for p in logs), usage=_u(4_300, 200)),
                say(
                    "Every slow request is **`GET /api/report`** (1.8–2.7 s), and each day ends with "
                    "`ERROR db pool exhausted (size=4, waiting=31)`: the report query holds one of only four "
                    "database connections for seconds, so other requests queue behind it.",
                    _u(72_400, 90),
                ),
            ],
        ),
        DemoTurn(
            "Write that down in NOTES.md.",
            [
                call(
                    ToolCall(
                        "write",
                        {
                            "filePath": str(root / "NOTES.md"),
                            "content": "# Incident: slow service\n\n"
                            "- Cause: /api/report holds a db connection for ~2 s; pool size 4.\n"
                            "- Symptom: `db pool exhausted` at the end of every day.\n"
                            "- Fix: raise the pool, move reports to a job.\n",
                        },
                    ),
                    usage=_u(73_100, 90),
                ),
                say("Written to `NOTES.md`.", _u(73_600, 10)),
            ],
        ),
        DemoTurn(
            "How many errors per day?",
            [
                call(
                    ToolCall(
                        "bash", {"command": "grep -c ERROR logs/*.log", "description": "Count errors per log"}
                    ),
                    usage=_u(74_200, 30),
                ),
                say("One per day — the pool exhaustion at 23:59 — in each of the six logs.", _u(74_800, 20)),
            ],
        ),
        DemoTurn(
            "Was it already like this last week? Compare with logs/archive/.",
            [
                call(*(ToolCall("read", {"filePath": p}) for p in archive[:2]), usage=_u(45_300, 120)),
                # The window is now past the usable budget: the loop compacts before the next step.
                call(ToolCall("read", {"filePath": archive[2]}), usage=_u(121_500, 60)),
                Reply(text=SUMMARY, usage=_u(52_000, 400), delay=pace / 3, chunk_size=12),
                say(
                    "Yes: the archive shows the same slow `/api/report` calls a week earlier, but no pool "
                    "exhaustion — the pool ran out only once traffic grew. The fix in `NOTES.md` stands.",
                    _u(14_800, 60),
                ),
            ],
        ),
    ]


# A summary asked for after the script (``/compact``): the script's own, said to be canned.
LATER_SUMMARY = (
    SUMMARY
    + """
## Note
- The demo's scripted model wrote this summary from its script: what was said after the script ended
  is not in it.
"""
)

FALLBACK = Reply(
    text=(
        "*(the demo's scripted model has no more script)* To go on with a real model: "
        "`/model openai/gpt-4o` (with `OPENAI_API_KEY` set) or `/model ollama_chat/llama3.1`; "
        "or try `/context`, `/sessions`, `/help`."
    )
)
