"""The ledger and the kept user words as pure functions over records (agentcli.session.compaction.ledger,
kept_words, carryover): counts, caps with the newest kept, resolution of errors, incremental merges
that count nothing twice, the budget for the user's words."""

from __future__ import annotations

from agentcli.session.compaction import carryover, kept_words, ledger
from agentcli.store.artifacts import Carryover, render, render_ledger
from agentcli.store.records import CarryoverPart
from tests.test_history import assistant, marker, summary_of, text, tool, user


def _bash(command: str, code: int, output: str = "") -> object:
    return tool("bash", output, input={"command": command}, metadata={"exit": code, "output": output})


def test_files_and_commands_are_counted_with_the_last_change_and_exit() -> None:
    q = user("go")
    a = assistant(
        q,
        tool("read", "1: x", input={"filePath": "/p/src/a.py"}),
        tool(
            "edit",
            "ok",
            input={"filePath": "/p/src/a.py"},
            metadata={"filediff": {"additions": 4, "deletions": 1}},
        ),
        tool("write", "ok", input={"filePath": "/p/notes.md", "content": "a\nb\nc\n"}),
        _bash("pytest -q", 1, "E   assert 1 == 2\nFAILED test_a"),
        _bash("pytest -q", 1, "FAILED test_b"),
        _bash("rm -f notes.md", 0),
    )
    led = ledger.fold(None, [q, a], directory="/p")
    files = {f.path: f for f in led.files}
    assert files["src/a.py"].reads == 1 and files["src/a.py"].edits == 1
    assert files["src/a.py"].change == "+4 −1 lines"
    assert files["notes.md"].writes == 1 and files["notes.md"].deleted
    [pytest_, rm] = sorted(led.commands, key=lambda c: c.command)
    assert (pytest_.command, pytest_.runs, pytest_.exit) == ("pytest -q", 2, 1)
    assert rm.exit == 0
    [error] = led.errors
    assert error.subject == "`pytest -q`" and error.message == "exit 1: FAILED test_b"
    text_ = render_ledger(led)
    assert "- src/a.py: read, edited (last change: +4 −1 lines)" in text_
    assert "- notes.md: written, deleted" in text_ and "- `pytest -q`: exit 1, 2 runs" in text_


def test_a_later_success_resolves_an_error() -> None:
    q = user("go")
    a = assistant(
        q,
        _bash("make", 2, "make: *** [all] Error 2"),
        tool("edit", status="error", error="oldString not found", input={"filePath": "x.py"}),
        tool("grep", status="error", error="bad regex", input={"pattern": "("}),
        _bash("make", 0),
        tool("write", "ok", input={"filePath": "x.py", "content": "y"}),
    )
    led = ledger.fold(None, [q, a])
    assert [e.tool for e in led.errors] == ["grep"]  # make ran clean and x.py was written since


def test_folding_again_counts_nothing_twice_and_adds_only_the_newer() -> None:
    q = user("go")
    a = assistant(q, tool("read", "x", input={"filePath": "a.py"}))
    first = ledger.fold(None, [q, a])
    q2 = user("more")
    a2 = assistant(q2, tool("read", "x", input={"filePath": "a.py"}))
    second = ledger.fold(first, [q, a, q2, a2])  # the window still holds the first turn (a kept tail)
    assert second.files[0].reads == 2 and second.through == a2.id


def test_long_lists_keep_the_newest_and_count_the_rest() -> None:
    q = user("go")
    a = assistant(q, *[_bash(f"echo {i}", 0) for i in range(ledger.MAX_COMMANDS + 7)])
    led = ledger.fold(None, [q, a])
    assert len(led.commands) == ledger.MAX_COMMANDS and led.more_commands == 7
    assert led.commands[0].command == f"echo {ledger.MAX_COMMANDS + 6}"  # newest first
    assert "(7 older commands not listed)" in render_ledger(led)


def test_user_words_newest_first_within_the_budget_the_first_pinned_and_cut_with_a_marker() -> None:
    first = user("RULE: always use tabs")
    middle = [user(f"request {i} " + "x" * 400) for i in range(5)]  # ~100 tokens each
    big = user("B" * 4_000)  # ~1,000 tokens: alone more than what is left
    newest = user("the newest question")
    kept, left_out = kept_words.keep(
        [], 0, [first, *middle, big, newest], through=None, budget=300, from_start=True
    )
    texts = [k.text for k in kept]
    assert texts[0] == "RULE: always use tabs" and kept[0].first
    assert texts[-1] == "the newest question"
    assert kept[-2].cut > 0 and kept[-2].text.startswith("BBB")  # cut, not dropped
    assert left_out == 5  # the middle ones, oldest first, for the budget
    assert "more characters cut]" in render(Carryover(user_messages=kept, left_out=left_out))


def test_agentclis_own_user_messages_are_not_the_users_words() -> None:
    q = user("real words", text("continue", synthetic=True, compaction_continue=True))
    nudge = user(text("Continue if you have next steps", synthetic=True, compaction_continue=True))
    replay = user(text("real words", replay_of=q.id))
    undone = user(text("undone", ignored=True))
    kept, _ = kept_words.keep([], 0, [q, nudge, replay, undone], through=None, budget=1_000, from_start=True)
    assert [k.text for k in kept] == ["real words"]


def test_the_carryover_merges_the_previous_compactions_and_hides_what_is_still_visible() -> None:
    q1 = user("first rule")
    a1 = assistant(q1, tool("read", "x", input={"filePath": "a.py"}))
    mark = marker()
    built = carryover.build([q1, a1], visible=set(), budget=1_000)
    summary = summary_of(mark, "useless")
    summary.parts.append(
        CarryoverPart(id="prt_z", session_id=summary.info.session_id, message_id=summary.id, carryover=built)
    )
    q2 = user("second")
    a2 = assistant(q2, tool("read", "x", input={"filePath": "b.py"}))
    again = carryover.build([mark, summary, q2, a2], visible={q2.id}, budget=1_000)
    assert [f.path for f in again.ledger.files] == ["b.py", "a.py"]
    assert [(m.text, m.visible) for m in again.user_messages] == [("first rule", False), ("second", True)]
    shown = render(again)
    assert "first rule" in shown and "second" not in shown  # the tail still has it verbatim


def test_the_first_rule_survives_ten_compactions_while_the_middle_goes_for_the_budget() -> None:
    history: list = [user("RULE: never push to main")]
    previous_summary = None
    for n in range(10):
        history += [user(f"request {n} " + "y" * 800), assistant(history[-1], "ok")]
        built = carryover.build(history, visible=set(), budget=500)
        mark = marker()
        previous_summary = summary_of(mark, "useless")
        previous_summary.parts.append(
            CarryoverPart(
                id=f"prt_c{n}",
                session_id=previous_summary.info.session_id,
                message_id=previous_summary.id,
                carryover=built,
            )
        )
        history = [mark, previous_summary]  # the window after it: the pair, then what comes next
    assert previous_summary is not None
    kept = previous_summary.carryover()
    assert kept is not None and kept.user_messages[0].text == "RULE: never push to main"
    assert kept.user_messages[-1].text.startswith("request 9") and kept.left_out > 0


def test_fresh_ids_on_import_keep_the_carryover_pointing_at_the_same_messages() -> None:
    from agentcli.session.archive.native import SessionArchive, rekey
    from agentcli.store.records import SessionInfo

    q = user("rule one")
    a = assistant(q, tool("read", "x", input={"filePath": "a.py"}))
    mark = marker()
    summary = summary_of(mark, "s")
    built = carryover.build([q, a], visible=set(), budget=1_000)
    summary.parts.append(
        CarryoverPart(id="prt_zz", session_id=summary.info.session_id, message_id=summary.id, carryover=built)
    )
    fresh = rekey(SessionArchive(info=SessionInfo(id="ses_x"), messages=[q, a, mark, summary]))
    q2, a2, _, summary2 = fresh.messages
    carried = summary2.carryover()
    assert (
        carried is not None
        and carried.ledger.through == a2.id
        and carried.user_messages[0].message_id == q2.id
    )
    assert carryover.current([*fresh.messages]).ledger.files[0].reads == 1  # not counted twice


def test_a_tasks_subagent_files_and_commands_are_folded_into_the_parents() -> None:
    child = ledger.fold(
        None,
        [
            q := user("task"),
            assistant(
                q,
                tool("read", "1: x", input={"filePath": "/p/src/a.py"}),
                tool("write", "ok", input={"filePath": "/p/out.md", "content": "a\nb\n"}),
                _bash("make", 0),
            ),
        ],
    )
    touched = child.model_dump(mode="json", include={"files", "commands", "more_files", "more_commands"})
    q = user("go")
    a = assistant(
        q,
        tool("edit", status="error", error="oldString not found", input={"filePath": "/p/out.md"}),
        tool("read", "1: x", input={"filePath": "/p/src/a.py"}),
        tool("task", "task_id: ses_1 …", input={"prompt": "do it"}, metadata={"ledger": touched}),
        # A cancelled task's work happened too; a part whose metadata is not a ledger is left alone.
        tool("task", status="error", error="aborted", input={"prompt": "more"}, metadata={"ledger": touched}),
        tool("task", "x", input={"prompt": "odd"}, metadata={"ledger": {"files": "nonsense"}}),
    )
    a.parts[-2].state.interrupted = True
    led = ledger.fold(None, [q, a], directory="/p")
    files = {f.path: f for f in led.files}
    assert files["src/a.py"].reads == 3  # its own read and its two tasks'
    assert files["out.md"].writes == 2 and files["out.md"].change == "2 lines written"
    [make] = led.commands
    assert (make.command, make.runs, make.exit) == ("make", 2, 0)
    assert not any(e.subject == "out.md" for e in led.errors)  # the task's write resolved the failed edit
