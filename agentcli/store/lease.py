"""The same-session lease: one running turn per session, across processes and machines.

A row in ``session_lease`` names the holder and an expiry (database clock, so machines with skewed
clocks agree). Taking it is one conditional upsert — it succeeds only when there is no row, the row
has expired, or it is ours — so two agents can never both hold it. A heartbeat thread pushes the
expiry forward while the turn runs; a killed agent stops renewing and its lease lapses after ``ttl``.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, text

from agentcli.store.db import StoreError

DEFAULT_TTL_S = 30.0  # a lease not renewed for this long is free
DEFAULT_WAIT_S = 60.0  # how long a second agent waits for a busy session before refusing it


class SessionBusy(StoreError):
    """The session has a turn running elsewhere and did not become free in time."""


def _setting(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


def _now_sql(dialect: str) -> str:
    if dialect == "sqlite":
        return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    return "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint)"


class Lease:
    """A held lease; ``release`` (or leaving the ``with`` block) frees it."""

    def __init__(self, engine: Engine, session_id: str, ttl_s: float) -> None:
        self.engine = engine
        self.session_id = session_id
        self.ttl_ms = int(ttl_s * 1000)
        self.owner = secrets.token_hex(8)
        self.holder = f"{socket.gethostname()} pid {os.getpid()}"
        self.lost = False  # set when a renewal found the lease taken over (we were presumed dead)
        self._now = _now_sql(engine.dialect.name)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def try_take(self) -> bool:
        sql = (
            "INSERT INTO session_lease (session_id, owner, holder, expires) "
            f"VALUES (:sid, :owner, :holder, {self._now} + :ttl) "
            "ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder, "
            "expires = excluded.expires "
            f"WHERE session_lease.expires < {self._now} OR session_lease.owner = excluded.owner"
        )
        with self.engine.begin() as conn:
            taken = conn.execute(text(sql), self._params()).rowcount == 1
        if taken and self._thread is None:
            self._thread = threading.Thread(target=self._heartbeat, name="agentcli-lease", daemon=True)
            self._thread.start()
        return taken

    def renew(self) -> bool:
        """Push the expiry forward; False when the lease is no longer ours."""
        with self.engine.begin() as conn:
            result = conn.execute(
                text(
                    f"UPDATE session_lease SET expires = {self._now} + :ttl "
                    "WHERE session_id = :sid AND owner = :owner"
                ),
                self._params(),
            )
        self.lost = result.rowcount == 0
        return not self.lost

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    text("DELETE FROM session_lease WHERE session_id = :sid AND owner = :owner"),
                    self._params(),
                )
        except StoreError:
            pass  # the database is gone: the lease expires on its own

    def current_holder(self) -> str:
        with self.engine.connect() as conn:
            row = conn.execute(
                text("SELECT holder FROM session_lease WHERE session_id = :sid"), {"sid": self.session_id}
            ).first()
        return row.holder if row else "another agent"

    def _params(self) -> dict[str, Any]:
        return {"sid": self.session_id, "owner": self.owner, "holder": self.holder, "ttl": self.ttl_ms}

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                self.renew()
            except StoreError:
                continue  # connection trouble: try again next beat; the turn's own writes will say so


def acquire(
    engine: Engine,
    session_id: str,
    *,
    wait_s: float | None = None,
    ttl_s: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Lease:
    """Take the session's lease, waiting up to ``wait_s`` while another agent holds it."""
    wait_s = _setting("AGENTCLI_SESSION_WAIT", DEFAULT_WAIT_S) if wait_s is None else wait_s
    ttl_s = _setting("AGENTCLI_SESSION_LEASE_TTL", DEFAULT_TTL_S) if ttl_s is None else ttl_s
    lease = Lease(engine, session_id, max(ttl_s, 0.3))
    deadline = time.monotonic() + wait_s
    told = False
    while not lease.try_take():
        if time.monotonic() >= deadline:
            raise SessionBusy(
                f"session {session_id} is busy: a turn is running in {lease.current_holder()}; "
                f"not continuing it (waited {wait_s:.0f}s)"
            )
        if not told and on_wait is not None:
            on_wait(
                f"session {session_id} is busy: a turn is running in {lease.current_holder()}; "
                f"waiting up to {wait_s:.0f}s"
            )
            told = True
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    return lease
