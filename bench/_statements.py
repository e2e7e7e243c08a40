"""SQL statements a piece of code sends, by kind: for the benchmarks' diagnostics. Not run."""

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg


@contextlib.contextmanager
def statements_seen() -> Iterator[list[str]]:
    """Every SQL statement sent meanwhile through any psycopg cursor (``Connection.execute``
    and the adapter's batched writes alike) and each COMMIT, in order."""
    seen: list[str] = []
    with (
        spying(psycopg.Cursor, into=seen, execute=None, executemany=None),
        spying(psycopg.Connection, into=seen, commit="COMMIT"),
    ):
        yield seen


def cursor_statements_seen() -> contextlib.AbstractContextManager[list[str]]:
    """Every statement sent meanwhile through psycopg.Cursor.execute / executemany."""
    return spying(psycopg.Cursor, execute=None, executemany=None)


@contextlib.contextmanager
def spied(
    cls: type, name: str, note: Callable[..., None], *, before: bool = False
) -> Iterator[None]:
    """Meanwhile ``note(self, result, *args, **kwargs)`` after each call of ``cls.name``; with
    ``before``, ``note(self, *args, **kwargs)`` before it. The method is restored at the end."""
    original = getattr(cls, name)

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        if before:
            note(self, *args, **kwargs)
        result = original(self, *args, **kwargs)
        if not before:
            note(self, result, *args, **kwargs)
        return result

    setattr(cls, name, spy)
    try:
        yield
    finally:
        setattr(cls, name, original)


@contextlib.contextmanager
def spying(cls: type, into: list[str] | None = None, **methods: str | None) -> Iterator[list[str]]:
    """Meanwhile each call of ``cls``'s ``methods`` notes, before it runs, its query (its
    ``query`` argument) or, where a method names a note (``commit="COMMIT"``), that note;
    in ``into`` when given."""
    seen: list[str] = [] if into is None else into

    def noting(note: str | None) -> Callable[..., None]:
        def add(_: Any, *args: Any, **kwargs: Any) -> None:
            seen.append(note if note is not None else str(args[0] if args else kwargs["query"]))

        return add

    with contextlib.ExitStack() as stack:
        for name, note in methods.items():
            stack.enter_context(spied(cls, name, noting(note), before=True))
        yield seen


def statement_kind(sql: str) -> str:
    """``SELECT|INSERT|UPDATE <table>`` (with ``FOR UPDATE``), or the statement's first word."""
    words = sql.split()
    if not words:
        return "(empty: the pool's connection check)"
    verb = words[0].upper()
    if verb == "WITH":
        writes = re.findall(r"AS \((INSERT INTO|UPDATE) (\w+)", sql)
        return "WITH: " + ", ".join(f"{v.split()[0]} {table}" for v, table in writes)
    if verb == "SELECT" and "FOR UPDATE OF r" in sql:
        table = re.search(r"FROM (\w+) r\b", sql).group(1)  # type: ignore[union-attr]
        return f"SELECT {table} FOR UPDATE (joined reads)"
    if verb == "SELECT" and "LEFT JOIN ecp_audit_settings s" in sql:  # ecp_postgres.run_context
        table = re.search(r"\bFROM (\w+) \w+\s+LEFT JOIN", sql)
        return f"SELECT {table.group(1) if table else 'the run context'} (joined reads)"
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
