"""SQL statements a piece of code sends, by kind: for the benchmarks' diagnostics. Not run."""

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg


@contextlib.contextmanager
def statements_seen() -> Iterator[list[str]]:
    """Every SQL statement (and COMMIT) sent meanwhile through psycopg.Connection."""
    seen: list[str] = []
    execute, commit = psycopg.Connection.execute, psycopg.Connection.commit

    def spy_execute(self: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(query))
        return execute(self, query, *args, **kwargs)

    def spy_commit(self: psycopg.Connection[Any]) -> None:
        seen.append("COMMIT")
        commit(self)

    psycopg.Connection.execute = spy_execute  # type: ignore[method-assign]
    psycopg.Connection.commit = spy_commit  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Connection.execute = execute  # type: ignore[method-assign]
        psycopg.Connection.commit = commit  # type: ignore[method-assign]


def statement_kind(sql: str) -> str:
    """``SELECT|INSERT|UPDATE <table>`` (with ``FOR UPDATE``), or the statement's first word."""
    words = sql.split()
    verb = words[0].upper()
    if verb == "SELECT" and "FROM" in words:
        table = words[words.index("FROM") + 1]
    elif verb == "SELECT":
        table = words[1].split("(")[0]
    elif verb == "INSERT":
        table = words[2]
    elif verb == "UPDATE":
        table = words[1]
    else:
        return verb
    return f"{verb} {table}" + (" FOR UPDATE" if sql.rstrip().endswith("FOR UPDATE") else "")
