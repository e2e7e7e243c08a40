"""Mapping between attrs models and table rows, and the base of every repository."""

import enum
import json
import operator
import re
from collections.abc import Hashable, Iterable, Mapping
from datetime import datetime
from typing import Any, Generic, TypeVar

import attrs
import orjson
import psycopg
from psycopg.types.json import Json, Jsonb

from ecp_core.canonical import MAX_SAFE_INTEGER
from ecp_core.errors import Conflict
from ecp_core.wire import format_timestamp, structure, unstructure
from ecp_postgres.session import PendingWrite, session_of, write_now

T = TypeVar("T")

_LONG_DIGITS = re.compile(r"\d{16}")


def _jsonb_integer(text: str) -> int | float:
    number = int(text) if len(text) <= len(str(MAX_SAFE_INTEGER)) + 1 else None
    if number is not None and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        return number
    return float(text)


def load_json(data: bytes | str) -> Any:  # noqa: ANN401 - JSON is dynamically typed
    """Read a json/jsonb value so that every number keeps the value it was accepted with.

    jsonb writes numbers as exact decimals without an exponent, so an accepted float such as
    ``1e16`` reads back as the integer text ``10000000000000000``. Integers beyond ±(2**53 - 1)
    never pass the wire boundary, so such a text was a float when it was accepted: it is read
    back as one, and canonicalisation, the audit digest and the answer agree on it again.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if _LONG_DIGITS.search(text) is None:
        return json.loads(text)
    return json.loads(text, parse_int=_jsonb_integer)


def jsonb_text(value: Any) -> bytes | str:  # noqa: ANN401 - JSON is dynamically typed
    """A ``jsonb`` parameter's text: orjson's, or ``json.dumps``'s where they could differ.

    jsonb keeps values, not text, so any valid spelling stores the same. ``json.dumps`` takes
    over for what orjson refuses (keys that are not strings, integers beyond 64 bits) and for
    any text holding ``null``, which is also how orjson writes NaN and infinities: those must
    keep failing as before, not turn into null.
    """
    try:
        data = orjson.dumps(value)
    except TypeError:
        return json.dumps(value)
    return json.dumps(value) if b"null" in data else data


class Table(Generic[T]):
    """One model stored in one table: which columns hold JSON, and how rows become models."""

    def __init__(
        self,
        name: str,
        model: type[T],
        *,
        jsonb: Iterable[str] = (),
        json: Iterable[str] = (),
        skip: Iterable[str] = (),
    ) -> None:
        """Columns are the model's fields minus ``skip``; ``jsonb``/``json`` name JSON columns."""
        self.name = name
        self.model = model
        self.jsonb = frozenset(jsonb)
        self.json = frozenset(json)
        self.columns = tuple(f.name for f in attrs.fields(model) if f.name not in set(skip))  # type: ignore[arg-type]
        self.column_list = ", ".join(self.columns)
        self.placeholders = ", ".join(f"%({column})s" for column in self.columns)
        self._json_columns = tuple(c for c in self.columns if c in self.jsonb or c in self.json)
        self._other_columns = tuple(c for c in self.columns if c not in self._json_columns)
        self._column_set = frozenset(self.columns)
        getter = operator.attrgetter(*self.columns)
        self._values = (lambda v: (getter(v),)) if len(self.columns) == 1 else getter

    def params(self, value: object) -> dict[str, Any]:
        """Query parameters for every column of ``value`` (in column order)."""
        params = dict(zip(self.columns, self._values(value), strict=True))
        for column in self._other_columns:
            if isinstance(params[column], enum.Enum):
                params[column] = params[column].value
        for column in self._json_columns:
            if params[column] is not None:
                params[column] = self._param(column, params[column])
        return params

    def _param(self, column: str, value: Any) -> Any:  # noqa: ANN401
        """The parameter of a JSON column's (not None) value."""
        plain = value if type(value) in (dict, list) else unstructure(value)
        return Jsonb(plain, dumps=jsonb_text) if column in self.jsonb else Json(plain)

    def load(self, row: Mapping[str, Any]) -> T:
        """Build the model from a row (validated like any wire input)."""
        data = {
            column: format_timestamp(value) if isinstance(value, datetime) else value
            for column, value in row.items()
            if column in self._column_set
        }
        return structure(data, self.model)

    def insert_sql(self, *, on_conflict_nothing: bool = False) -> str:
        """``INSERT`` of every column (optionally ignoring a conflicting row)."""
        tail = " ON CONFLICT DO NOTHING" if on_conflict_nothing else ""
        return f"INSERT INTO {self.name} ({self.column_list}) VALUES ({self.placeholders}){tail}"  # noqa: S608

    def update_sql(self, key: str) -> str:
        """``UPDATE`` of every column but ``key``, matched on ``key``."""
        sets = ", ".join(f"{c} = %({c})s" for c in self.columns if c != key)
        return f"UPDATE {self.name} SET {sets} WHERE {key} = %({key})s"  # noqa: S608

    def select_sql(self) -> str:
        """``SELECT`` of every column (the caller appends the rest)."""
        return f"SELECT {self.column_list} FROM {self.name}"  # noqa: S608


class Repository:
    """Base of the PostgreSQL repositories: every one works on its unit of work's connection."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Work on ``conn`` (inside the unit of work's transaction)."""
        self._conn = conn

    def _one(self, table: Table[T], where: str, params: tuple[Any, ...]) -> T | None:
        row = self._conn.execute(f"{table.select_sql()} WHERE {where}", params).fetchone()
        return None if row is None else table.load(row)

    def _all(self, table: Table[T], tail: str, params: tuple[Any, ...]) -> list[T]:
        rows = self._conn.execute(f"{table.select_sql()} {tail}", params).fetchall()
        return [table.load(row) for row in rows]

    def _insert(self, table: Table[T], value: T, conflict: Conflict) -> None:
        """Insert ``value``; raise ``conflict`` when a row with one of its keys exists."""
        cursor = self._conn.execute(table.insert_sql(on_conflict_nothing=True), table.params(value))
        if cursor.rowcount != 1:
            raise conflict

    def _write(self, write: PendingWrite, key: Hashable | None = None) -> None:
        """Queue ``write`` in the unit of work's batch (``key`` replaces an earlier one).

        On a plain connection (not a unit of work's) it is executed at once.
        """
        session = session_of(self._conn)
        if session is None:
            write_now(self._conn.cursor(), write)
            return
        if session.pending.full_for(write, key):
            session.flush()
        session.pending.add(write, key)

    def _pending(self, key: Hashable) -> PendingWrite | None:
        """The write queued under ``key`` in this transaction, or None."""
        session = session_of(self._conn)
        return None if session is None else session.pending.get(key)

    def _memo(self) -> dict[Hashable, Any]:
        """What this transaction has read and keeps (a throwaway dict on a plain connection)."""
        session = session_of(self._conn)
        return {} if session is None else session.memo
