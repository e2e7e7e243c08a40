"""The statements a test's own thread sends to PostgreSQL, counted exactly (unlike timing)."""

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import psycopg


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
