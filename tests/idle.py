"""Waiting until a process has nothing left to do on its own (Linux's /proc): the condition a test or a
benchmark waits on before timing what a user does next, instead of a sleep of a guessed length."""

from __future__ import annotations

import os
import time
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User and system CPU the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, limit: float = 120) -> None:
    """Until the process has used (almost) no CPU for two half-seconds in a row: whatever it does in the
    background before the user's next keystroke is done. Fails after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    last, quiet = cpu_seconds(pid), 0
    while quiet < 2:
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} never went idle in {limit:g} s")
        time.sleep(0.5)
        now = cpu_seconds(pid)
        quiet = quiet + 1 if now - last < 0.02 else 0
        last = now
