"""Shared pytest fixtures. Keep small: one fixture per shared need."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

# Before anything imports litellm: never fetch the model cost map from the internet.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# Test modules import helpers as `tests.fakellm`; the repo root is not on sys.path under plain `pytest`.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import pytest  # noqa: E402

from tests.fakellm import FakeLLM  # noqa: E402

# The markers (e2e, litellm, slow) and --cpu-top: tests/suite.py.
from tests.suite import (  # noqa: E402, F401
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
    pytest_terminal_summary,
)


def pytest_configure(config: pytest.Config) -> None:
    """Compile agentcli's bytecode once for the whole run: every CLI the tests start (hundreds) would
    otherwise compile the modules it imports from source when PYTHONDONTWRITEBYTECODE is set, about a
    fifth of a start's CPU. (compileall writes whatever that variable says; an unchanged file is skipped.)
    Likewise the test modules while they are collected: with that variable set, every worker rewrote
    the asserts of all of them and compiled the helpers anew, each run (about 5 s of CPU a worker)."""
    import compileall

    compileall.compile_dir(Path(_ROOT) / "agentcli", quiet=1)
    config.stash[_DONT_WRITE_BYTECODE] = sys.dont_write_bytecode
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from tests import zygote

        zygote.share()  # xdist's workers share this process's CLI fork servers (tests/zygote.py)
    sys.dont_write_bytecode = False  # until pytest_collection_finish: the tests' own bytecode is kept


_DONT_WRITE_BYTECODE = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = session.config.stash.get(_DONT_WRITE_BYTECODE, sys.dont_write_bytecode)
    # What collection loaded (every test module, agentcli, hypothesis, the ACP schema) lives as long as
    # the worker: the collector's full passes need not walk it again after every few thousand tests'
    # garbage (what agentcli's own `settle` does for a command).
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A started scripted OpenAI-compatible server (see tests/fakellm.py); stopped after the test."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path, fake_llm: FakeLLM):  # type: ignore[no-untyped-def]
    """A project dir with opencode.json pointing at the scripted server, a private HOME and DB."""
    from tests.workspace import make_workspace

    ws = make_workspace(tmp_path, fake_llm.base_url)
    ws.write_config()
    return ws
