"""Statements and commits as PostgreSQL itself counts them, for the benchmarks: its statement log
(``log_statement = all`` set on one database) . Imported by the bench
scripts; not run.

The log is the embedded server's (``_database.server`` notes its path) or, on
``ECP_BENCH_DATABASE_URL``, the file ``pg_current_logfile()`` names when this user may read it;
elsewhere the statement counts are unknown (None) and only the commits are printed.
"""

from __future__ import annotations

import collections
import pathlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

if TYPE_CHECKING:
    from collections.abc import Iterator

LOGGED = re.compile(r"LOG:  (?:statement|execute [^:]*): (.*)")


def log_path(url: str, embedded: pathlib.Path | None) -> pathlib.Path | None:
    """The server's log file: ``embedded`` when given, else what the server says, if readable."""
    if embedded is not None:
        return embedded
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT current_setting('data_directory'), pg_current_logfile()"
            ).fetchone()
    except psycopg.Error:
        return None
    if row is None or row[1] is None:
        return None
    path = pathlib.Path(row[0]) / row[1]
    return path if path.is_file() else None


def log_every_statement(maintenance_url: str, database: str) -> None:
    """``log_statement = all`` for new sessions on ``database`` (start its clients after this)."""
    with psycopg.connect(maintenance_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET log_statement = 'all'").format(sql.Identifier(database))
        )


def kind(statement: str) -> str:
    """A statement's kind: its first word, with the table or function a SELECT reads."""
    words = statement.split()
    if not words:
        return "(empty)"  # the pool's connection check
    verb = words[0].upper().rstrip(";")
    if verb == "SELECT":
        lowered = [w.lower() for w in words]
        if "from" in lowered:
            return f"SELECT {words[lowered.index('from') + 1]}"
        return f"SELECT {words[1].split('(')[0]}" if len(words) > 1 else "SELECT"
    if verb in ("INSERT", "DELETE"):
        return f"{verb} {words[2]}" if len(words) > 2 else verb
    if verb == "UPDATE":
        return f"UPDATE {words[1]}" if len(words) > 1 else verb
    return verb


PID = re.compile(r"\[(\d+)\]")


def logged(text: str) -> Iterator[tuple[str, str]]:
    """Each statement the log ``text`` shows, with its session (the backend's pid)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        found = LOGGED.search(line)
        if not found:
            continue
        statement = found[1]
        for more in lines[number + 1 : number + 4]:  # a statement's next lines: a tab first
            if statement.strip() or not more.startswith("\t"):
                break
            statement = more
        pid = PID.search(line[: found.start()])
        yield (pid[1] if pid else ""), statement


@dataclass
class Window:
    """What one database's sessions sent between :func:`opened` and :meth:`close`, from the
    server's log: statements by kind, and transactions that committed (``COMMIT``, or a
    statement outside ``BEGIN``, which commits on its own) or rolled back. None when unknown.

    ``log_commits`` counts the commits of transactions that named a transparency log table
    (``ecp_log_*``): the integrator's, which signs a checkpoint off the request path.
    """

    log: pathlib.Path | None
    offset: int = 0
    commits: int = 0
    log_commits: int = 0
    rollbacks: int = 0
    statements: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def known(self) -> bool:
        return self.log is not None

    def close(self) -> Window:
        """Read what happened since the window opened."""
        if self.log is None:
            return self
        with self.log.open("rb") as handle:
            handle.seek(self.offset)
            text = handle.read().decode(errors="replace")
        open_in: dict[str, bool] = {}  # sessions (pids) inside BEGIN: whether it named a log table
        for session, statement in logged(text):
            what = kind(statement)
            self.statements[what] += 1
            if what in ("BEGIN", "START"):
                open_in[session] = False
            elif what in ("COMMIT", "END"):
                self.commits += 1
                self.log_commits += open_in.pop(session, False)
            elif what in ("ROLLBACK", "ABORT"):
                open_in.pop(session, None)
                self.rollbacks += 1
            elif session in open_in:
                open_in[session] |= "ecp_log_" in statement
            elif what != "(empty)":
                self.commits += 1  # autocommit (an empty statement starts no transaction)
                self.log_commits += "ecp_log_" in statement
        return self

    @property
    def total(self) -> int:
        return sum(self.statements.values())

    def per(self, count: float) -> str:
        """Statements by kind per ``count`` (runs, seconds), the largest first."""
        if not self.known:
            return "statements unknown (no readable server log)"
        return ", ".join(
            f"{name} {number / count:.2f}" for name, number in self.statements.most_common()
        )


def opened(log: pathlib.Path | None) -> Window:
    """A window on the server log from now (:func:`log_every_statement` chooses the database)."""
    return Window(log, offset=log.stat().st_size if log is not None else 0)
