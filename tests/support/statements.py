"""The statements a test's own thread, or every thread, sends to PostgreSQL, counted exactly
(unlike timing)."""

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg._connection_base import BaseConnection


@contextlib.contextmanager
def statements() -> Iterator[list[str]]:
    """Every statement this thread sends through any psycopg cursor meanwhile, and ``COMMIT`` for
    each commit (other threads of the process, e.g. another test's workers, are not counted)."""
    seen: list[str] = []
    execute, commit = psycopg.Cursor.execute, psycopg.Connection.commit
    mine = threading.get_ident()

    def spy_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == mine:
            seen.append(str(query))
        return execute(self, query, *args, **kwargs)

    def spy_commit(self: Any) -> None:
        if threading.get_ident() == mine:
            seen.append("COMMIT")
        commit(self)

    psycopg.Cursor.execute = spy_execute  # type: ignore[method-assign]
    psycopg.Connection.commit = spy_commit  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        psycopg.Connection.commit = commit  # type: ignore[method-assign]


@contextlib.contextmanager
def sent_to(database: str) -> Iterator[list[str]]:
    """Every statement any thread sends to ``database`` meanwhile, transaction control included."""
    seen: list[str] = []
    execute, many = psycopg.Cursor.execute, psycopg.Cursor.executemany
    command = BaseConnection._exec_command
    name = psycopg.conninfo.conninfo_to_dict(database)["dbname"]

    def note(conn: Any, query: object) -> None:
        if conn.info.dbname == name:
            text = query.decode() if isinstance(query, bytes) else str(query)
            seen.append(" ".join(text.split()))

    def spy_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        note(self.connection, query)
        return execute(self, query, *args, **kwargs)

    def spy_many(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        note(self.connection, query)
        return many(self, query, *args, **kwargs)

    def spy_command(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        note(self, query)
        return command(self, query, *args, **kwargs)

    psycopg.Cursor.execute = spy_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = spy_many  # type: ignore[method-assign]
    BaseConnection._exec_command = spy_command  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        psycopg.Cursor.executemany = many  # type: ignore[method-assign]
        BaseConnection._exec_command = command  # type: ignore[method-assign]
