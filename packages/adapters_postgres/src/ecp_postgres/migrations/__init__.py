"""Yoyo migration chains, one folder per area, applied in dependency order.

Applying and rolling back hold a PostgreSQL session-level advisory lock on the connection that
migrates, so the lock ends with that connection however it ends; reading the state takes no lock
and is bounded in time (ADR 0022).
"""

import contextlib
import logging
import pathlib
import time
from collections.abc import Collection, Iterator

import attrs
import psycopg
from psycopg import sql
from yoyo import read_migrations  # type: ignore[import-untyped]
from yoyo.backends import PostgresqlPsycopgBackend  # type: ignore[import-untyped]
from yoyo.connections import default_migration_table, parse_uri  # type: ignore[import-untyped]
from yoyo.migrations import Migration, MigrationList  # type: ignore[import-untyped]

AREAS = (
    "core",
    "audit",
    "approvals",
    "identity",
    "retention",
    "webhooks",
    "econ",
    "tasks",
    "billing",
    "entitlements",
    "accounts",
    "backtests",
    "attestations",
    "templates",
    "certification",
    "connectors",
    "transparency",
    "rollouts",
)
"""Folders of migration chains; later areas (retention, webhooks, evidence …) append here."""

LOCK_KEY = 0x6563_705F_6D69_6772
"""Key of the migration advisory lock (the ASCII bytes of ``ecp_migr``); advisory locks are per database."""

LOCK_POLL_SECONDS = 0.2
"""How often a connection waiting for the migration lock tries again."""

STATUS_TIMEOUT_SECONDS = 2
"""Bound on connecting, and on each statement, when reading which migrations are applied."""

_HERE = pathlib.Path(__file__).parent
log = logging.getLogger("ecp_postgres.migrations")


class _Backend(PostgresqlPsycopgBackend):  # type: ignore[misc]
    """Yoyo's psycopg 3 backend with an advisory lock instead of yoyo's committed lock row.

    Each migration's steps, its log line and its mark share one transaction on the connection that
    holds the lock (yoyo runs the steps on a second connection and marks them afterwards, so a
    connection lost in between left a migration applied but unmarked, failing every later apply).
    """

    _is_locked = False

    def create_lock_table(self) -> None:
        """Create no lock table: nothing here reads or writes it any more."""

    @contextlib.contextmanager
    def lock(self, timeout: int = 0) -> Iterator[None]:  # noqa: ARG002 - yoyo's signature
        """Hold the advisory lock, waiting while another connection holds it; re-entrant."""
        if self._is_locked:  # yoyo's internal-schema upgrade takes the lock again
            yield
            return
        key = {"key": LOCK_KEY}
        if not self.execute("SELECT pg_try_advisory_lock(:key)", key).fetchone()[0]:
            log.info("waiting for the migration lock: another connection is migrating")
            # Polled, never waited for in one statement: a statement waiting holds a snapshot,
            # and the holder's CREATE INDEX CONCURRENTLY waits for every older snapshot to end.
            while not self.execute("SELECT pg_try_advisory_lock(:key)", key).fetchone()[0]:
                time.sleep(LOCK_POLL_SECONDS)
        self._is_locked = True
        try:
            yield
        finally:
            self._is_locked = False
            with contextlib.suppress(psycopg.Error):  # a lost connection has released it already
                self.execute("SELECT pg_advisory_unlock(:key)", key)

    def apply_one(self, migration: Migration, force: bool = False, mark: bool = True) -> None:  # noqa: FBT001, FBT002 - yoyo's signature
        """Apply one migration, log and mark it, in one transaction."""
        if not migration.use_transactions:
            super().apply_one(migration, force=force, mark=mark)
            return
        log.info("applying %s", migration.id)
        self.ensure_internal_schema_updated()
        with self.transaction():
            migration.process_steps(self, "apply", force=force)
            self.log_migration(migration, "apply")
            if mark:
                self.mark_one(migration, log=False)

    def rollback_one(self, migration: Migration, force: bool = False) -> None:  # noqa: FBT001, FBT002 - yoyo's signature
        """Roll back one migration, log and unmark it, in one transaction."""
        if not migration.use_transactions:
            super().rollback_one(migration, force=force)
            return
        log.info("rolling back %s", migration.id)
        self.ensure_internal_schema_updated()
        with self.transaction():
            migration.process_steps(self, "rollback", force=force)
            self.log_migration(migration, "rollback")
            self.unmark_one(migration, log=False)


@contextlib.contextmanager
def _locked(url: str) -> Iterator[_Backend]:
    """A yoyo backend whose connection holds the migration lock, closed afterwards."""
    backend = _Backend(parse_uri(url), default_migration_table)
    try:
        backend.init_database()
        with backend.lock():
            _clear_lock_rows(backend)
            yield backend
    finally:
        backend.connection.close()


def _clear_lock_rows(backend: _Backend) -> None:
    """Delete the row a release before ADR 0022 may have left in yoyo's lock table.

    Nothing here waits on that row; clearing it keeps an older release (a rolled-back deployment)
    or the ``yoyo`` command from waiting for ever on a lock whose holder is gone.
    """
    exists = backend.execute("SELECT to_regclass(:table)", {"table": backend.lock_table})
    if exists.fetchone()[0] is None:
        return
    delete = "DELETE FROM {0.lock_table_quoted} RETURNING {quoted.pid}, {quoted.ctime}"
    for pid, taken in backend.execute(backend.format_sql(delete)).fetchall():
        log.warning("cleared yoyo's migration lock row of process %s, taken at %s UTC", pid, taken)


def migrations() -> MigrationList:
    """Every migration of every area."""
    return read_migrations(*(str(_HERE / area) for area in AREAS))


def apply(url: str, only: Collection[str] | None = None) -> list[str]:
    """Apply what is not yet applied (of the ids in ``only``, when given); return the ids applied."""
    with _locked(url) as backend:
        pending = backend.to_apply(migrations())
        if only is not None:
            pending = pending.filter(lambda migration: migration.id in only)
        backend.apply_migrations(pending)
    return [migration.id for migration in pending]


def rollback(url: str, count: int = 1) -> list[str]:
    """Roll back the last ``count`` applied migrations; return their ids."""
    with _locked(url) as backend:
        applied = backend.to_rollback(migrations())[:count]
        backend.rollback_migrations(applied)
    return [migration.id for migration in applied]


@attrs.frozen
class SchemaState:
    """Which of this build's migrations a database has, and which it has that this build lacks."""

    migrations: list[tuple[str, bool]]
    """Every migration this build knows, with whether it is applied, in application order."""
    unknown: list[str]
    """Applied migrations this build does not know (a newer release applied them)."""

    @property
    def verdict(self) -> str:
        """``newer`` (migrations this build lacks), ``pending`` (some not applied), ``current``."""
        if self.unknown:
            return "newer"
        return "current" if all(applied for _, applied in self.migrations) else "pending"


def schema_state(url: str, timeout_seconds: int = STATUS_TIMEOUT_SECONDS) -> SchemaState:
    """The database's migrations against this build's.

    Takes no lock and writes nothing: one connection (``timeout_seconds`` to connect) and one read
    of yoyo's migration table (``timeout_seconds`` of statement time), so a database that is away
    raises :class:`psycopg.Error` within a bounded time instead of making the caller wait.
    """
    every = migrations()
    timeout_ms = str(timeout_seconds * 1000)
    with psycopg.connect(url, connect_timeout=timeout_seconds, autocommit=True) as conn:
        conn.execute(
            "SELECT set_config('statement_timeout', %(ms)s, false),"
            " set_config('lock_timeout', %(ms)s, false)",
            {"ms": timeout_ms},
        )
        read = sql.SQL("SELECT migration_hash, migration_id FROM {}").format(
            sql.Identifier(default_migration_table)
        )
        applied: dict[str, str] = {}
        with contextlib.suppress(psycopg.errors.UndefinedTable):  # nothing ever applied
            applied.update((str(h), str(i)) for h, i in conn.execute(read).fetchall())
    known = {migration.hash for migration in every}
    return SchemaState(
        migrations=[(migration.id, migration.hash in applied) for migration in every],
        unknown=sorted(i for h, i in applied.items() if h not in known),
    )


def status(url: str, timeout_seconds: int = STATUS_TIMEOUT_SECONDS) -> list[tuple[str, bool]]:
    """Every migration id with whether it is applied, in application order (no lock taken)."""
    return schema_state(url, timeout_seconds).migrations
