"""The same-session lease: one running turn per session, across processes and machines.

A row in ``session_lease`` names the holder and an expiry (database clock, so machines with skewed
clocks agree). Taking it is one conditional upsert — it succeeds only when there is no row, the row
has expired, or it is ours — so two agents can never both hold it. A heartbeat thread pushes the
expiry forward while the turn runs; a killed agent stops renewing and its lease lapses after ``ttl``.
A holder on this machine that is known dead (its process gone; ``process_key`` tells a reused pid
apart) does not make the next agent wait for that: its lease is taken at once, by a compare-and-set
on its owner, so two waiters still cannot both take it.

A holder that was only stalled (suspended, cut off from the database) past ``ttl`` may find its
session taken over when it wakes. It must then write nothing more: every write of the session's
store checks the lease in its own transaction (``verify``) and fails with ``LeaseLost``. Every way
out of the process frees the lease: leaving the ``with`` block, and the interpreter's exit handlers
for a process that leaves while a turn still holds it (``lifecycle.finish`` after a cancelled turn
did not wind down, a signal turned into an exit).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, text

from agentcli.store.db import StoreError

DEFAULT_TTL_S = 30.0  # a lease not renewed for this long is free
DEFAULT_WAIT_S = 60.0  # how long a second agent waits for a busy session before refusing it


class SessionBusy(StoreError):
    """The session has a turn running elsewhere and did not become free in time."""


class LeaseLost(StoreError):
    """This turn's lease lapsed and another agent took the session: the turn must stop writing."""


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
        # Random, and who this process is (when /proc tells): a waiter on this machine can see it died.
        self.owner = f"{secrets.token_hex(8)} {process_key(os.getpid()) or ''}".rstrip()
        self.holder = f"{socket.gethostname()} pid {os.getpid()}"
        self.lost = False  # the lease was found taken over (we were presumed dead); it stays lost
        self.on_release: Callable[[], None] | None = None  # the store stops checking its writes
        self._now = _now_sql(engine.dialect.name)
        self._share = " FOR SHARE" if engine.dialect.name == "postgresql" else ""
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
        # Registered before the row can exist: a Ctrl-C between the commit and this method's return
        # would otherwise leave a lease no exit path frees. (It frees only a row that is ours.)
        first = self._thread is None
        if first:
            atexit.register(self._release_at_exit)
        with self.engine.begin() as conn:
            taken = conn.execute(text(sql), self._params()).rowcount == 1 or self._take_from_the_dead(conn)
        if first and not taken:
            atexit.unregister(self._release_at_exit)
        elif first:
            self._thread = threading.Thread(target=self._heartbeat, name="agentcli-lease", daemon=True)
            self._thread.start()
        return taken

    def _take_from_the_dead(self, conn: Connection) -> bool:
        """The holder is a process of this machine that no longer runs: take its lease now."""
        row = conn.execute(
            text("SELECT owner FROM session_lease WHERE session_id = :sid"), {"sid": self.session_id}
        ).first()
        if row is None or not _is_dead(row.owner):
            return False
        sql = (
            f"UPDATE session_lease SET owner = :owner, holder = :holder, expires = {self._now} + :ttl "
            "WHERE session_id = :sid AND owner = :dead"
        )
        return conn.execute(text(sql), {**self._params(), "dead": row.owner}).rowcount == 1

    def renew(self) -> bool:
        """Push the expiry forward; False when the lease is no longer ours (for good)."""
        if self.lost:
            return False
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

    def verify(self, conn: Connection) -> None:
        """In a write transaction of the session, after its writes: ``LeaseLost`` unless the lease
        is still ours, so the transaction rolls back. The check holds the lease row until the
        commit (SQLite: the write lock the writes took; PostgreSQL: ``FOR SHARE``, which a takeover's
        upsert waits for), so no takeover slips in between. Expired but not taken over is still
        ours: no one else wrote, and the next renewal extends it."""
        if not self.lost:
            row = conn.execute(
                text(f"SELECT owner FROM session_lease WHERE session_id = :sid{self._share}"),
                {"sid": self.session_id},
            ).first()
            self.lost = row is None or row.owner != self.owner
        if self.lost:
            raise LeaseLost(
                f"session {self.session_id} was taken over by another agent while this turn was stalled "
                f"(its lease lapses {self.ttl_ms / 1000:g}s without renewal): this turn stopped and "
                "wrote nothing more"
            )

    def release(self) -> None:
        self._stop.set()
        atexit.unregister(self._release_at_exit)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._delete()
        if self.on_release is not None:
            self.on_release()

    def abandon(self) -> None:
        """Its turn was left behind: the session is free at once, and whatever the turn still writes
        is refused (``verify``), as for a lease taken over."""
        self.lost = True
        self._stop.set()
        atexit.unregister(self._release_at_exit)
        self._delete()

    def _release_at_exit(self) -> None:
        """The process is leaving while this lease is held (a turn that did not wind down): free it,
        and refuse whatever the turn still tries to write before the process is gone."""
        self.lost = True
        self._stop.set()
        with contextlib.suppress(Exception):  # nothing is left to tell at exit; the lease lapses anyway
            self._delete()

    def _delete(self) -> None:
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
                if not self.renew():
                    return  # taken over: the turn's next write says so (``verify``)
            except StoreError:
                continue  # connection trouble: try again next beat; the turn's own writes will say so


class Held:
    """The leases one store's turns hold, each session's writes checked against them. A write from
    the thread that took a lease is checked against that one, so a turn left behind (``abandon``)
    cannot write on the lease of the turn that came after it; other threads' writes (a title, a
    task) go by the session's newest lease."""

    def __init__(self) -> None:
        self._by_session: dict[str, Lease] = {}
        self._mine = threading.local()

    def add(self, held: Lease) -> Lease:
        sid = held.session_id
        self._by_session[sid] = held
        mine = self._thread_leases()
        mine[sid] = held

        def forget() -> None:
            if self._by_session.get(sid) is held:
                del self._by_session[sid]
            if mine.get(sid) is held:
                del mine[sid]

        held.on_release = forget
        return held

    def abandon(self, session_id: str) -> None:
        held = self._by_session.pop(session_id, None)
        if held is not None:
            held.abandon()

    def verify(self, conn: Connection, session_id: str) -> None:
        held = self._thread_leases().get(session_id) or self._by_session.get(session_id)
        if held is not None:
            held.verify(conn)

    def _thread_leases(self) -> dict[str, Lease]:
        leases = getattr(self._mine, "leases", None)
        if leases is None:
            leases = self._mine.leases = {}
        return leases


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


def process_key(pid: int) -> str | None:
    """Who process ``pid`` is on this machine, beyond its pid (which the kernel reuses): the boot, our
    pid namespace and its start time. None where /proc does not tell (not Linux, gone, hidden)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return f"{boot}/{namespace}/{pid}/{stat[19]}"
    except (OSError, IndexError):
        return None


def _is_dead(owner: str) -> bool:
    """A lease owner that names a process of this boot and pid namespace that no longer runs."""
    key = owner.partition(" ")[2]
    parts = key.split("/")
    mine = process_key(os.getpid())
    if len(parts) != 4 or not parts[2].isdigit() or mine is None or mine.split("/")[:2] != parts[:2]:
        return False  # another machine's, or an owner that does not say: only its ttl tells
    pid = int(parts[2])
    now = process_key(pid)
    if now is not None:  # running: the same process, or the pid reused by another since
        return now != key or _state(pid) in ("Z", "X")  # a zombie: killed, not yet reaped
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # someone else's, hidden from our /proc: alive as far as we can tell
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""
