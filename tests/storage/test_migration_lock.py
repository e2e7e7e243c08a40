"""The migration lock ends with its connection, and readiness never waits for it (ADR 0022).

Applying and rolling back hold a session-level advisory lock; reading the schema state takes no
lock and is bounded in time. Connections are killed with ``pg_terminate_backend`` as a crash or a
lost network would, and a loopback server that accepts and then never answers plays a frozen
database.
"""

import base64
import concurrent.futures
import contextlib
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import attrs
import psycopg
import pytest
from starlette.testclient import TestClient
from yoyo import get_backend

from ecp_http.config.settings import Settings
from ecp_http.startup.app import create_app
from ecp_postgres import (
    apply_migrations,
    create_database,
    drop_database,
    migration_status,
    rollback_migrations,
)
from ecp_postgres.migrations import LOCK_KEY, migrations

pytestmark = pytest.mark.integration

SECRET = "f" * 40
START_UP_ANSWER = b"".join(
    [
        b"R" + struct.pack("!ii", 8, 0),  # authentication ok
        b"K" + struct.pack("!iii", 12, 1, 1),  # backend key data
        b"Z" + struct.pack("!i", 5) + b"I",  # ready for query
    ]
)
WAIT_SECONDS = 30.0

OTHER_BACKENDS = """
SELECT pid, wait_event_type, wait_event FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
"""

ADVISORY_LOCKS = """
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def settings_for(url: str) -> Settings:
    return Settings(
        database_url=url, jwt_secret=SECRET, audit_signing_key=base64.b64encode(bytes(32)).decode()
    )


def yoyo_url(url: str) -> str:
    """The URL as yoyo's stock psycopg 3 backend, which releases before ADR 0022 used, takes it."""
    return "postgresql+psycopg" + url.removeprefix("postgresql")


def last_migration() -> str:
    return [m.id for m in migrations()][-1]


def waiting_backend(url: str, event: tuple[str, str], work: concurrent.futures.Future) -> int:
    """Poll pg_stat_activity until another session waits on ``event``; return its pid."""
    deadline = time.monotonic() + WAIT_SECONDS
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            for pid, *waits in conn.execute(OTHER_BACKENDS):
                if tuple(waits) == event:
                    return pid
            if work.done():
                pytest.fail(f"the migrator ended without waiting on {event}: {work.result()}")
            time.sleep(0.01)
    pytest.fail(f"no session ever waited on {event}")


def terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]


def advisory_locks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(ADVISORY_LOCKS).fetchone()[0]


def readiness(client: TestClient) -> tuple[int, str]:
    answer = client.get("/health/ready")
    return answer.status_code, answer.json()["checks"]["schema"]


def in_thread(work: Callable[[], object]) -> concurrent.futures.Future:
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(work)
    pool.shutdown(wait=False)
    return future


@pytest.fixture
def empty_database(postgres_url) -> Iterator[str]:
    """URL of a new database without any migration."""
    name = f"ecp_test_lock_{os.getpid()}"
    drop_database(postgres_url, name)
    yield create_database(postgres_url, name)
    drop_database(postgres_url, name)


# -- a migrator that dies ------------------------------------------------------------------------


def test_a_migrator_killed_mid_migration_leaves_neither_a_lock_nor_half_a_migration(fresh_database):
    last = last_migration()
    assert rollback_migrations(fresh_database, 1) == [last]
    with psycopg.connect(fresh_database) as blocker:
        # The migrator runs the migration's steps, then blocks writing its log line.
        blocker.execute("LOCK TABLE _yoyo_log IN SHARE MODE")
        migrator = in_thread(lambda: apply_migrations(fresh_database))
        pid = waiting_backend(fresh_database, ("Lock", "relation"), migrator)
        terminate(fresh_database, pid)
        with pytest.raises(psycopg.Error):
            migrator.result(timeout=WAIT_SECONDS)
        blocker.rollback()
    assert advisory_locks(fresh_database) == 0
    with TestClient(create_app(settings_for(fresh_database))) as client:
        assert readiness(client) == (503, "pending")
        assert apply_migrations(fresh_database) == [last]  # the next start-up applies it once
        assert readiness(client) == (200, "current")
    assert all(applied for _, applied in migration_status(fresh_database))


def test_a_start_up_waiting_for_the_lock_goes_on_when_its_holder_is_killed(fresh_database, caplog):
    last = last_migration()
    assert rollback_migrations(fresh_database, 1) == [last]
    with TestClient(create_app(settings_for(fresh_database))) as client:
        with psycopg.connect(fresh_database, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
            assert readiness(client) == (503, "pending")  # answered while the lock is held
            with caplog.at_level(logging.INFO, logger="ecp_postgres.migrations"):
                start_up = in_thread(lambda: apply_migrations(fresh_database))
                deadline = time.monotonic() + WAIT_SECONDS
                while "waiting for the migration lock" not in caplog.text:  # it polls
                    assert not start_up.done(), start_up.result()
                    assert time.monotonic() < deadline, "the start-up never waited for the lock"
                    time.sleep(0.01)
            terminate(fresh_database, holder.info.backend_pid)
            assert start_up.result(timeout=WAIT_SECONDS) == [last]
        assert readiness(client) == (200, "current")
    assert advisory_locks(fresh_database) == 0


def test_an_older_release_killed_holding_its_lock_row_blocks_nothing(fresh_database):
    last = last_migration()
    assert rollback_migrations(fresh_database, 1) == [last]
    older = get_backend(yoyo_url(fresh_database))
    with pytest.raises(psycopg.Error), older.lock():  # yoyo's committed lock row
        terminate(fresh_database, older.connection.info.backend_pid)
    with psycopg.connect(fresh_database) as conn:
        assert conn.execute("SELECT count(*) FROM yoyo_lock").fetchone()[0] == 1
    with TestClient(create_app(settings_for(fresh_database))) as client:
        assert readiness(client) == (503, "pending")
        assert apply_migrations(fresh_database) == [last]
        assert readiness(client) == (200, "current")
    with psycopg.connect(fresh_database) as conn:
        assert conn.execute("SELECT count(*) FROM yoyo_lock").fetchone()[0] == 0
    # An older release (a rolled-back deployment) takes its row lock again at once.
    again = get_backend(yoyo_url(fresh_database))
    with again, again.lock(timeout=1):
        pass


# -- readiness never waits -------------------------------------------------------------------------


@pytest.mark.spec("§4.5 readiness")
def test_readiness_answers_while_a_migration_holds_the_lock(fresh_database):
    older = get_backend(yoyo_url(fresh_database))
    with (
        TestClient(create_app(settings_for(fresh_database))) as client,
        psycopg.connect(fresh_database, autocommit=True) as holder,
        older,
        older.lock(),
    ):
        holder.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        assert readiness(client) == (200, "current")
        assert all(applied for _, applied in migration_status(fresh_database))


@contextlib.contextmanager
def stalled_database() -> Iterator[str]:
    """A loopback server that completes PostgreSQL's start-up exchange, then never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def answer_start_up(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                length, code = struct.unpack("!ii", conn.recv(8, socket.MSG_WAITALL))
                if code in (80877103, 80877104):  # SSL or GSS encryption request: refused
                    conn.sendall(b"N")
                    continue
                conn.recv(length - 8, socket.MSG_WAITALL)
                break
            conn.sendall(START_UP_ANSWER)
            while conn.recv(4096):  # read queries, answer none
                pass

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)
                threading.Thread(target=answer_start_up, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"postgresql://ecp@127.0.0.1:{listener.getsockname()[1]}/ecp?sslmode=disable"
    finally:  # shutdown, not only close: it wakes the threads blocked on these sockets
        for sock in (listener, *accepted):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def refusing_database() -> str:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    return f"postgresql://ecp@127.0.0.1:{port}/ecp"


@pytest.mark.spec("§4.5 readiness")
def test_readiness_is_503_naming_the_schema_when_the_database_refuses_or_stalls(fresh_database):
    with (
        stalled_database() as stalled,
        TestClient(create_app(settings_for(fresh_database))) as client,
    ):
        runtime = client.app.state.runtime
        configured = runtime.settings
        runtime.settings = attrs.evolve(configured, database_url=refusing_database())
        assert readiness(client) == (503, "unreachable: OperationalError")
        runtime.settings = attrs.evolve(configured, database_url=stalled)
        degraded = client.get("/health/ready")
        assert degraded.status_code == 503
        assert degraded.json() == {
            "status": "degraded",
            "checks": {
                "schema": "unreachable: TimeoutError",
                "dispatcher": "running",
                "scheduler": "running",
            },
        }
        # A second check waits for the read in flight instead of starting another one.
        assert readiness(client) == (503, "unreachable: TimeoutError")
        assert [t.name for t in threading.enumerate()].count("ecp-schema-check") == 1


# -- concurrent start-ups ------------------------------------------------------------------------


@pytest.mark.spec("§9 migrations")
def test_two_concurrent_start_ups_apply_each_migration_exactly_once(empty_database):
    every = [m.id for m in migrations()]
    both = threading.Barrier(2)

    def start_up() -> list[str]:
        both.wait()
        return apply_migrations(empty_database)

    first, second = in_thread(start_up), in_thread(start_up)
    results = sorted(
        [first.result(timeout=WAIT_SECONDS * 4), second.result(timeout=WAIT_SECONDS * 4)]
    )
    assert results == [[], every]
    with psycopg.connect(empty_database) as conn:
        marked = [row[0] for row in conn.execute("SELECT migration_id FROM _yoyo_migration")]
        applies = conn.execute(
            "SELECT count(*) FROM _yoyo_log WHERE operation = 'apply'"
        ).fetchone()[0]
    assert sorted(marked) == sorted(every)
    assert applies == len(every)
    assert all(applied for _, applied in migration_status(empty_database))
