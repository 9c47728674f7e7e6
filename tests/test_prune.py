"""The prune plan: P1, P2 (with prune on, reference §10.3) and the cases that follow from §3.5/§14.

An output of 4 chars per token: "x" * (4 * n) is n estimated tokens.
"""

from __future__ import annotations

from agentcli.session.compaction.prune import PRUNE_MINIMUM, PRUNE_PROTECT, plan
from agentcli.store.records import ToolPart, WithParts
from tests.test_history import assistant, marker, summary_of, tool, user


def tokens_of(n: int) -> str:
    return "x" * (4 * n)


def tool_ids(msg: WithParts) -> list[str]:
    return [p.id for p in msg.parts if isinstance(p, ToolPart)]


def planned(msgs: list[WithParts]) -> list[str]:
    return [p.id for p in plan(msgs).parts]


def test_p1_old_completed_output_is_pruned() -> None:
    first = user("first")
    a = assistant(first, tool("bash", "x" * 200_000))
    result = plan([first, a, user("second"), user("third")])
    assert [p.id for p in result.parts] == tool_ids(a)
    assert result.tokens == 50_000


def test_p2_skill_output_is_protected() -> None:
    first = user("first")
    a = assistant(first, tool("skill", "x" * 200_000))
    assert plan([first, a, user("second"), user("third")]).parts == []


def test_skill_output_is_not_counted_towards_the_protection() -> None:
    first = user("first")
    older = assistant(first, tool("bash", tokens_of(30_000)))
    newer = assistant(first, tool("skill", tokens_of(45_000)))
    # Had the skill output counted, the bash output would be past the 40k line.
    assert plan([first, older, newer, user("second"), user("third")]).parts == []


def test_the_newest_two_user_turns_are_never_touched() -> None:
    u1 = user("one")
    a1 = assistant(u1, tool(output=tokens_of(50_000)))
    u2 = user("two")
    a2 = assistant(u2, tool(output=tokens_of(50_000)))
    assert plan([u1, a1, u2, a2]).parts == []
    u3 = user("three")
    assert planned([u1, a1, u2, a2, u3]) == tool_ids(a1)


def test_the_output_crossing_the_line_is_itself_cleared() -> None:
    first = user("first")
    oldest = assistant(first, tool(output=tokens_of(25_000)))
    crossing = assistant(first, tool(output=tokens_of(25_000)))
    newest = assistant(first, tool(output=tokens_of(30_000)))
    msgs = [first, oldest, crossing, newest, user("second"), user("third")]
    result = plan(msgs)
    assert [p.id for p in result.parts] == tool_ids(crossing) + tool_ids(oldest)
    assert result.tokens == 50_000


def test_nothing_when_the_gain_is_at_most_the_minimum() -> None:
    first = user("first")
    old = assistant(first, tool(output=tokens_of(PRUNE_MINIMUM)))
    protected = assistant(first, tool(output=tokens_of(PRUNE_PROTECT)))
    msgs = [first, old, protected, user("second"), user("third")]
    assert plan(msgs).parts == []  # 20k pruned is not more than 20k
    bigger = assistant(first, tool(output=tokens_of(PRUNE_MINIMUM + 1)))
    assert planned([first, bigger, protected, user("second"), user("third")]) == tool_ids(bigger)


def test_an_already_compacted_part_stops_the_walk() -> None:
    first = user("first")
    beyond = assistant(first, tool(output=tokens_of(50_000)))
    done = assistant(first, tool(output=tokens_of(50_000), compacted=1))
    recent = assistant(first, tool(output=tokens_of(35_000)))
    msgs = [first, beyond, done, recent, user("second"), user("third")]
    assert plan(msgs).parts == []  # "recent" is inside the protection; "beyond" is never reached
    fresh = [first, beyond, recent, user("second"), user("third")]
    assert planned(fresh) == tool_ids(beyond)


def test_a_summary_stops_the_walk() -> None:
    first = user("first")
    before = assistant(first, tool(output=tokens_of(60_000)))
    c = marker()
    s = summary_of(c)
    after = user("after")
    recent = assistant(after, tool(output=tokens_of(35_000)))
    msgs = [first, before, c, s, after, recent, user("second"), user("third")]
    assert plan(msgs).parts == []
    without_summary = [first, before, after, recent, user("second"), user("third")]
    assert planned(without_summary) == tool_ids(before)


def test_only_completed_tool_parts_count() -> None:
    first = user("first")
    failed = assistant(first, tool(status="error", output=tokens_of(60_000), error="x"))
    running = assistant(first, tool(status="running", output=tokens_of(60_000)))
    assert plan([first, failed, running, user("second"), user("third")]).parts == []


def test_the_plan_changes_nothing() -> None:
    first = user("first")
    a = assistant(first, tool("bash", "x" * 200_000))
    msgs = [first, a, user("second"), user("third")]
    plan(msgs)
    assert a.parts[0].state.time.compacted is None  # type: ignore[union-attr]
