"""The suite's markers, given in one place by what a test uses (conftest imports these hooks):

- ``e2e``: the CLI as a subprocess or the REPL in a pseudo-terminal (the ``workspace`` fixture, the
  ``test_e2e_*`` files and a few others that start ``agentcli``);
- ``litellm``: the litellm path (litellm imported, in the test's process or the CLI's);
- ``slow``: both of those, and the in-process tests measured among the costliest (``SLOW_TESTS``).

``python -m pytest -m "not slow"`` is the fast subset for editing. ``--cpu-top N`` prints the N tests
that took the most CPU (the test's process and the subprocesses it waited for, setup and teardown
included), to find the next ones for ``SLOW_TESTS``.
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from typing import Any

import pytest

from tests import zygote

# Files whose tests start agentcli as a subprocess or in a pseudo-terminal (besides the workspace fixture).
E2E_FILES = {
    "test_startup.py",
    "test_demo.py",
    "test_private_files.py",
    "test_trust.py",
    "test_turn_cancel.py",
    "test_config_cmd.py",
    "test_eval_compaction.py",
}
# Files that are about litellm itself: every test in them imports it.
LITELLM_FILES = {
    "test_litellm_internals.py",
    "test_llm_modelmap.py",
    "test_llm_anthropic_parity.py",
    "test_llm_paths.py",
    "test_stream_corpus.py",
    "test_llm_warm.py",
}
# Tests elsewhere that import litellm in-process (the first to do so in a worker pays ~4 s of CPU).
LITELLM_TESTS = {
    "tests/test_llm_tokens.py::test_request_estimate_never_raises",
    "tests/test_llm_lazy.py::test_concurrent_first_use_gets_one_module",
    "tests/test_llm_lazy.py::test_warm_thread_finishes_when_already_loaded",
    "tests/test_llm_stream.py::test_unknown_model_names_the_model",  # 3.9 s: litellm names the model
}
# A test elsewhere whose name or parameters say it takes litellm's path, unless it says the opposite.
LITELLM_WORDS = ("litellm", "both_paths")
NOT_LITELLM_WORDS = ("never_import", "not_import", "without_litellm", "without_importing", "no_litellm")
# Tests measured among the costliest (--cpu-top) that the rules above miss: over ~1 s of CPU each here.
SLOW_TESTS = {
    "tests/test_atomic_write.py::test_kill_during_edits_of_a_large_file_never_leaves_it_cut_short",  # 6.9 s
    "tests/test_atomic_write.py::test_the_next_edit_removes_temporary_files_whose_writer_is_gone",  # 2.6 s
    "tests/test_llm_lazy.py::test_importing_the_package_does_not_import_litellm",  # 4.0 s: a fresh Python
    "tests/test_carryover.py::test_five_useless_summaries_lose_no_file_command_rule_skill_or_todo",  # 1.4 s
    "tests/test_history_fuzz.py::test_history_never_invalid",  # 13 s: 20 fixed sequences on the real loop
    # 5-6.5 s: eight fresh processes create one database
    "tests/test_store_backends.py::test_several_processes_creating_a_new_database_at_once_all_succeed",
    # 3.8-4.5 s
    "tests/test_context_figure.py::test_every_figure_is_within_one_percent_of_the_next_reported_input_and_all_four_agree",
    "tests/test_prune_reads.py::test_prune_stops_reading_at_the_first_pruned_output",  # 1.1 s
    # 1 s: a real MCP server
    "tests/test_mcp_timing.py::test_a_server_still_starting_joins_the_session_when_ready",
    # 15-30 s a part: each rule's keyword repeated, 25 KB and 100 KB of each
    "tests/test_redact_hostile.py::test_each_own_rules_keyword_repeated_costs_linear_time",
    "tests/test_redact_hostile.py::test_each_own_rules_keyword_after_each_separator_costs_linear_time",
    "tests/test_redact_hostile.py::test_each_vendor_rules_keyword_repeated_costs_linear_time",
    # 1-10 s each: the families of tests/hostile_families.py, 8 KB and 32 KB of each
    "tests/test_redact_hostile.py::test_each_vendor_rules_keyword_beside_each_separator_costs_linear_time",
    "tests/test_redact_hostile.py::test_each_regex_of_the_redactor_cut_short_costs_linear_time",
    "tests/test_redact_hostile.py::test_each_vendor_regex_cut_short_costs_linear_time",
    "tests/test_redact_hostile.py::test_unicode_whitespace_digits_and_letters_after_each_construction_cost_linear_time",
    "tests/test_redact_hostile.py::test_lines_mixing_keywords_and_constructions_cost_linear_time",
    "tests/test_redact_hostile.py::test_a_key_followed_by_many_candidate_values_costs_linear_time",
    "tests/test_redact_hostile.py::test_many_short_lines_cost_linear_time",
    "tests/test_redact_hostile.py::test_very_long_lines_cost_linear_time",
    "tests/test_redact_hostile.py::test_every_vendor_regex_cut_short_costs_its_share_at_8_kb",
    # 3-6 s: builds the wheel (pip, its build backend from the registry's cache)
    "tests/test_package_data.py::test_every_data_file_in_the_package_ships_and_no_rule_source_does",
}


def _is_e2e(item: pytest.Item) -> bool:
    name = item.path.name
    fixtures = getattr(item, "fixturenames", ())
    return name.startswith("test_e2e_") or name in E2E_FILES or "workspace" in fixtures


def _is_litellm(item: pytest.Item) -> bool:
    if item.path.name in LITELLM_FILES or item.nodeid.split("[")[0] in LITELLM_TESTS:
        return True
    words = item.name.lower()
    return any(w in words for w in LITELLM_WORDS) and not any(w in words for w in NOT_LITELLM_WORDS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        e2e, litellm = _is_e2e(item), _is_litellm(item)
        if e2e:
            item.add_marker(pytest.mark.e2e)
        if litellm:
            item.add_marker(pytest.mark.litellm)
        if e2e or litellm or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-top", type=int, default=0, metavar="N", help="print the N tests that took most CPU"
    )


def _cpu() -> float:
    """This process's CPU, its children's waited for, and the CLI children forked for it (tests/zygote.py)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + zygote.CHILD_CPU[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    if not item.config.getoption("--cpu-top"):
        return (yield)
    start = _cpu()
    item.user_properties.append(("cpu_start", start))  # read back when the last report is made
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if call.when == "teardown" and item.config.getoption("--cpu-top"):
        start = dict(item.user_properties).get("cpu_start")
        if isinstance(start, float):
            report.user_properties.append(("cpu_s", _cpu() - start))
    return report


_CPU: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cpu = dict(report.user_properties).get("cpu_s")
    if report.when == "teardown" and isinstance(cpu, float):
        _CPU[report.nodeid] = cpu


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    top = config.getoption("--cpu-top")
    if not top or not _CPU:
        return
    terminalreporter.write_sep(
        "=", f"the {top} tests that took most CPU (of {len(_CPU)}, {sum(_CPU.values()):.0f} s)"
    )
    for nodeid, cpu in sorted(_CPU.items(), key=lambda kv: -kv[1])[:top]:
        terminalreporter.write_line(f"{cpu:7.2f}s  {nodeid}")
