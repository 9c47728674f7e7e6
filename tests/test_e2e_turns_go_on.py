"""A turn goes on where it should and stops where it must (issue 17): a compaction the model asks for
mid-turn continues the turn, `run`'s exit status agrees with its JSON result, a model that polls is
not stopped as a loop, a model that loops is."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from agentcli.session.doom_loop import POLL_LIMIT, CallRun
from agentcli.trusted_config import load_config
from tests import zygote
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage, is_summary_request
from tests.workspace import Workspace, agentcli_argv


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_memory_compact_mid_turn_continues_the_turn_and_run_exits_0(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"plugin": ["memory"]}, context=200_000)
    workspace.seed_turns(
        fake_llm, [("start the parser work", Reply(text="noted", usage=Usage(119_000, 500)))]
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("memory_compact", {})], usage=Usage(120_000, 50)),
        Reply(text="## Objective\n- the parser", usage=Usage(5_000, 100)),
        Reply(text="Carried on after compacting: parser done.", usage=Usage(6_000, 20)),
    )
    proc = workspace.run("run", "--continue", "--format", "json", "compact, then finish the parser")
    assert proc.returncode == 0, proc.stderr
    events = _json_lines(proc.stdout)
    assert any(e["type"] == "compacted" for e in events)
    assert [e["text"] for e in events if e["type"] == "text"] == ["Carried on after compacting: parser done."]
    result = events[-1]
    assert result["type"] == "result" and result["error"] is None and result["exit_code"] == 0
    assert len(fake_llm.chat_requests()) == 4  # the seeded turn, the tool step, the summary, the answer


def test_a_turn_stopped_unfinished_exits_1_and_its_json_result_says_why(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    same = Reply(
        tool_calls=[ToolCall("bash", {"command": "true", "description": "noop"})], usage=Usage(100, 5)
    )
    fake_llm.push(same, same, same)
    proc = workspace.run("run", "--yes", "--format", "json", "loop")
    assert proc.returncode == 1
    result = _json_lines(proc.stdout)[-1]
    assert result["exit_code"] == 1 and result["error"]["name"] == "TurnStopped"
    assert "3 times in a row" in result["error"]["message"]


def _poll() -> Reply:
    # The same command each time; its output grows (a build log being watched).
    command = "echo line >> build.log && wc -l < build.log"
    return Reply(
        tool_calls=[ToolCall("bash", {"command": command, "description": "poll"})], usage=Usage(100, 5)
    )


def test_a_model_polling_a_changing_result_is_not_stopped_as_a_loop(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(*[_poll() for _ in range(6)], Reply(text="the build log has 6 lines", usage=Usage(100, 5)))
    proc = workspace.run("run", "--yes", "watch the build")
    assert proc.returncode == 0, proc.stderr
    assert "the build log has 6 lines" in proc.stdout and "times in a row" not in proc.stderr
    assert (workspace.project / "build.log").read_text().count("line") == 6


def test_polling_past_the_limit_stops_and_a_loop_still_stops_at_three(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(*[_poll() for _ in range(POLL_LIMIT)])
    proc = workspace.run("run", "--yes", "watch forever")
    assert proc.returncode == 1
    assert f"called bash {POLL_LIMIT} times in a row" in proc.stderr and "changed each time" in proc.stderr
    assert (workspace.project / "build.log").read_text().count("line") == POLL_LIMIT - 1

    same = Reply(
        tool_calls=[ToolCall("bash", {"command": "echo same", "description": "x"})], usage=Usage(9, 1)
    )
    fake_llm.push(same, same, same)
    proc = workspace.run("run", "--yes", "--continue", "loop now")
    assert proc.returncode == 1 and "called bash 3 times in a row with the same arguments" in proc.stderr


def test_identical_results_make_a_loop_changing_ones_polling() -> None:
    run = CallRun()
    for result in ("1", "2"):
        assert run.verdict("bash", {"c": 1}) == "run"
        run.record("bash", {"c": 1}, result)
    assert run.verdict("bash", {"c": 1}) == "run"  # results changed: polling, the third goes
    run.record("bash", {"c": 1}, "2")  # …and then the result stops changing
    assert run.verdict("bash", {"c": 1}) == "loop"
    assert run.verdict("bash", {"c": 2}) == "run"  # other arguments: a new run


def test_two_concurrent_compacts_make_one_summary_and_the_other_says_so(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.seed_turns(
        fake_llm, [(f"question {i}", Reply(text=f"answer {i}", usage=Usage(300, 5))) for i in range(3)]
    )
    entered, release = threading.Event(), threading.Event()

    def held_summary(_rec: Any) -> Reply:
        entered.set()
        release.wait(60)  # the first summary is held until the second agent waits for the session
        return Reply(text="## Objective\n- THE ONE SUMMARY", usage=Usage(300, 5))

    fake_llm.on(lambda r: is_summary_request(r.body), held_summary)

    def start() -> subprocess.Popen[str]:
        argv = [*agentcli_argv(), "compact"]
        return zygote.popen(argv, cwd=workspace.project, env=workspace.env, text=True, stderr=subprocess.PIPE)

    first = start()
    assert entered.wait(60)
    second = start()
    assert second.stderr is not None
    seen = ""
    while "is busy" not in seen:  # the second agent read the session and now waits for its lease
        line = second.stderr.readline()
        assert line, seen
        seen += line
    release.set()
    assert first.wait(60) == 0
    rest = second.communicate(timeout=60)[1]
    assert second.returncode == 0 and "already compacted" in seen + rest and "Traceback" not in seen + rest
    [session] = workspace.store().list_sessions()
    summaries = [m for m in workspace.store().messages(session.id) if getattr(m.info, "summary", False)]
    assert len(summaries) == 1 and session.compactions == 1


RELATIVE_PLUGIN = """
from agentcli.plugins import hookimpl

@hookimpl
def chat_system_transform(input, output):
    output["system"].append("RELATIVE PLUGIN LOADED")
"""


def test_a_relative_file_url_plugin_loads_from_the_config_files_folder(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    folder = workspace.project / ".opencode"
    (folder / "plugins").mkdir(parents=True)
    (folder / "plugins" / "marker.py").write_text(RELATIVE_PLUGIN)
    (folder / "opencode.json").write_text(json.dumps({"plugin": ["file://./plugins/marker.py"]}))
    fake_llm.push(Reply(text="hello", usage=Usage(10, 1)))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "failed to load" not in proc.stderr
    assert "RELATIVE PLUGIN LOADED" in json.dumps(fake_llm.chat_requests()[-1].body["messages"][:2])


def test_a_relative_file_url_plugin_of_an_untrusted_project_stays_out(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    (project / "opencode.json").write_text(json.dumps({"plugin": ["file://./plugins/marker.py"]}))
    loaded = load_config(project, {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})
    assert loaded.config.plugin == [] and loaded.trust is not None and loaded.trust.keys() == ["plugin[0]"]
    trusted = load_config(
        project, {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "AGENTCLI_TRUST_ALL": "1"}
    )
    assert trusted.config.plugin == [(project / "plugins" / "marker.py").resolve().as_uri()]
