"""litellm is imported only when needed, configured once, quietly."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

from agentcli.llm import warm
from agentcli.llm.lazy import get_litellm, is_loaded

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_package_does_not_import_litellm() -> None:
    code = (
        "import sys, json, time\n"
        "import agentcli.llm\n"
        "from agentcli.llm import lazy, warm\n"
        "before = [lazy.is_loaded(), 'litellm' in sys.modules]\n"
        "thread = warm.start('gemini/gemini-2.0-flash')\n"
        "thread.join(120)\n"
        "m = lazy.get_litellm()\n"
        "print(json.dumps(before + [lazy.is_loaded(), thread.daemon, m.drop_params, m.suppress_debug_info,\n"
        "                           m.set_verbose, m.callbacks, lazy.loaded_litellm() is m]))\n"
    )
    env_free = {"PATH": "/usr/bin:/bin"}  # and without LITELLM_LOCAL_MODEL_COST_MAP preset
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=150, env=env_free
    )
    assert out.returncode == 0, out.stderr
    loaded_before, in_modules_before, loaded, daemon, drop, quiet, verbose, callbacks, same = json.loads(
        out.stdout
    )
    assert (loaded_before, in_modules_before) == (False, False)
    assert loaded and daemon and same
    assert drop is False and quiet is True and verbose is False and callbacks == []
    assert out.stderr == ""


def test_concurrent_first_use_gets_one_module() -> None:
    seen: list[ModuleType] = []
    threads = [threading.Thread(target=lambda: seen.append(get_litellm())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(seen) == 4 and all(m is seen[0] for m in seen)
    assert is_loaded()
    assert logging.getLogger("LiteLLM").level == logging.CRITICAL
    assert seen[0].disable_streaming_logging is True  # no per-chunk logging jobs (we keep no callbacks)


def test_warm_thread_finishes_when_already_loaded() -> None:
    get_litellm()
    thread = warm.start("gemini/gemini-2.0-flash")
    thread.join(60)  # the rehearsal of the first stream, if this process has not streamed yet
    assert not thread.is_alive()
