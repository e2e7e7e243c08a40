"""The connection a unit of work runs on: its writes go together, its reads are remembered.

A run's attempt writes its state, its audit records, the chain head and its approvals. Each of
those used to be a statement of its own; here they wait in the connection's
:class:`WriteBatch` and leave as one statement (a ``WITH`` of data-modifying parts) at the next
statement or at commit, so that a transaction's writes cost one round trip (ADR 0059). Any
statement flushes the batch first, so every read sees the transaction's own writes.

:attr:`UnitConnection.memo` keeps what the transaction has read and will not read again (a
deployment's policy, a tenant's audit settings, a chain's head); it is cleared when the
transaction ends.
"""

import functools
import re
from collections.abc import Callable, Hashable
from typing import Any

import attrs
import psycopg
from psycopg import pq
from psycopg.rows import tuple_row

_PARAM = re.compile(r"%\((\w+)\)s")


@attrs.frozen
class PendingWrite:
    """One data-modifying statement waiting in the batch.

    ``sql`` uses named parameters only. When ``expected`` is set, the statement must affect
    exactly that many rows, else ``error()`` is raised (and the transaction is not committed).
    """

    sql: str
    params: dict[str, Any]
    expected: int | None = None
    error: Callable[[], Exception] | None = None

    def __attrs_post_init__(self) -> None:
        """A checked write names the error its refusal raises."""
        if self.expected is not None and self.error is None:
            raise ValueError("a write with an expected row count needs its error")


MAX_WRITES = 32
"""At most this many writes leave in one statement; a further one sends the batch first."""
MAX_PARAMETERS = 3_000
"""At most about this many parameters in one statement (PostgreSQL allows 65,535; planning a very
long ``WITH`` grows faster than its length)."""


class WriteBatch:
    """Writes waiting to be sent, in order; a keyed write can be replaced until it is sent."""

    def __init__(self) -> None:
        """An empty batch."""
        self._writes: dict[Hashable, PendingWrite] = {}
        self._unkeyed = 0
        self._parameters = 0

    def full_for(self, write: PendingWrite, key: Hashable | None) -> bool:
        """Whether adding ``write`` would make the batch longer than one statement should be."""
        if key is not None and key in self._writes:
            return False
        return bool(self._writes) and (
            len(self._writes) >= MAX_WRITES or self._parameters + len(write.params) > MAX_PARAMETERS
        )

    def add(self, write: PendingWrite, key: Hashable | None = None) -> None:
        """Queue ``write``; with a ``key`` already queued, replace that write in its place."""
        if key is None:
            self._unkeyed += 1
            key = ("unkeyed", self._unkeyed)
        replaced = self._writes.get(key)
        self._parameters += len(write.params) - (0 if replaced is None else len(replaced.params))
        self._writes[key] = write

    def get(self, key: Hashable) -> PendingWrite | None:
        """The queued write under ``key``, or None."""
        return self._writes.get(key)

    def discard(self) -> None:
        """Forget every queued write (the transaction is rolled back)."""
        self._writes.clear()
        self._parameters = 0

    def take(self) -> list[PendingWrite]:
        """Every queued write, in order; the batch is empty afterwards."""
        writes = list(self._writes.values())
        self.discard()
        return writes

    def only_on(self, table: str) -> bool:
        """Whether every queued write inserts into or updates ``table`` alone."""
        heads = (f"INSERT INTO {table} ", f"UPDATE {table} ")
        return all(write.sql.startswith(heads) for write in self._writes.values())

    def __bool__(self) -> bool:
        """Whether anything waits."""
        return bool(self._writes)

    def __len__(self) -> int:
        """How many writes wait."""
        return len(self._writes)


REFUSED = "EC001"
"""The SQLSTATE ``ecp_expect_rows`` raises when a batched write affected other than it must."""


@functools.lru_cache(maxsize=512)
def _combined_sql(sqls: tuple[str, ...]) -> tuple[str, tuple[tuple[int, str], ...]]:
    """The statement doing every write of ``sqls`` and the (write, name) of each ``$n``.

    Each write is a ``WITH`` part; the main query returns each part's row count. The text uses
    the server's own ``$n`` placeholders (sent by a raw cursor, so the driver does not parse the
    long text again on each call); it is made once per combination of writes.
    """
    order: list[tuple[int, str]] = []
    parts: list[str] = []
    for index, sql in enumerate(sqls):
        numbers: dict[str, int] = {}

        def number(
            match: re.Match[str], index: int = index, numbers: dict[str, int] = numbers
        ) -> str:
            name = match.group(1)
            if name not in numbers:
                order.append((index, name))
                numbers[name] = len(order)
            return f"${numbers[name]}"

        parts.append(f"w{index} AS ({_PARAM.sub(number, sql)} RETURNING 1)")
    counts = ", ".join(f"(SELECT count(*) FROM w{i})" for i in range(len(sqls)))  # noqa: S608
    return f"WITH {', '.join(parts)} SELECT ARRAY[{counts}]", tuple(order)


def combined(writes: list[PendingWrite]) -> tuple[str, list[Any]]:
    """One statement doing every write (it returns their row counts), and its ``$n`` parameters."""
    sql, order = _combined_sql(tuple(write.sql for write in writes))
    return sql, [writes[index].params[name] for index, name in order]


def refusal(writes: list[PendingWrite], exc: psycopg.Error) -> Exception | None:
    """The error of the write ``exc`` (raised by ``ecp_expect_rows``) names, or None for another."""
    if exc.sqlstate != REFUSED or exc.diag.message_detail is None:
        return None
    error = writes[int(exc.diag.message_detail)].error
    return None if error is None else error()


def _refused(writes: list[PendingWrite], counts: list[int]) -> bool:
    return any(
        write.expected is not None and count != write.expected
        for write, count in zip(writes, counts, strict=True)
    )


def write_now(cursor: psycopg.Cursor[Any], write: PendingWrite) -> None:
    """Execute ``write`` at once on ``cursor`` and check what it affected."""
    cursor.execute(write.sql, write.params)
    if _refused([write], [cursor.rowcount]):
        _refuse(cursor, [write], [cursor.rowcount])


def _refuse(cursor: psycopg.Cursor[Any], writes: list[PendingWrite], counts: list[int]) -> None:
    """Fail the transaction in the database for the first write that affected the wrong rows.

    ``ecp_expect_rows`` (migration core_0006) raises SQLSTATE :data:`REFUSED` naming the write,
    so the transaction is aborted there: nothing the caller does next can commit the writes that
    went with the refused one. The write's own error is raised.
    """
    expected = [write.expected for write in writes]
    try:
        cursor.execute("SELECT ecp_expect_rows(%s::bigint[], %s::bigint[])", (counts, expected))
    except psycopg.Error as exc:
        refused = refusal(writes, exc)
        if refused is None:
            raise
        raise refused from None
    raise RuntimeError("ecp_expect_rows accepted counts that differ from the expected ones")


class UnitConnection(psycopg.Connection[dict[str, Any]]):
    """A pooled connection that batches a unit of work's writes and remembers its reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - psycopg's own
        """As :class:`psycopg.Connection`, with an empty batch and memo."""
        super().__init__(*args, **kwargs)
        self.pending = WriteBatch()
        self.memo: dict[Hashable, Any] = {}
        self.returned_at = 0.0
        """When the connection last went back to the pool cleanly (``time.monotonic``)."""

    def cursor(self, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - psycopg's own
        """A cursor, after the queued writes are sent (every statement goes through here)."""
        if self.pending:
            self.flush()
        return super().cursor(*args, **kwargs)

    def execute_before_writes(
        self, query: str, params: dict[str, Any] | tuple[Any, ...]
    ) -> psycopg.Cursor[Any]:
        """Run a read that neither sees nor needs the queued writes, leaving them queued."""
        return super().cursor().execute(query, params)

    def flush(self) -> None:
        """Send the queued writes (one statement).

        A write that affected other than it must raises its error and aborts the transaction.
        """
        writes = self.pending.take()
        if writes:
            self._send(writes)

    def commit(self) -> None:
        """Send the queued writes, then the commit, then forget the memo."""
        self.flush()
        super().commit()
        self.memo.clear()

    def _send(self, writes: list[PendingWrite]) -> None:
        """A lone write goes as itself; several go as one ``WITH`` that returns their counts."""
        if len(writes) == 1:
            with super().cursor() as cursor:
                write_now(cursor, writes[0])
            return
        sql, params = combined(writes)
        with psycopg.RawCursor(self, row_factory=tuple_row) as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
            assert row is not None  # noqa: S101 - the statement always returns its one row
            counts: list[int] = list(row[0])
            if _refused(writes, counts):
                _refuse(super().cursor(), writes, counts)

    def rollback(self) -> None:
        """Forget the queued writes and the memo, then roll back, keeping prepared statements."""
        self.pending.discard()
        self.memo.clear()
        if self.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            self._keeping_prepared(b"ROLLBACK")

    def roll_back_to(self, savepoint: str) -> None:
        """Undo the transaction's work since ``savepoint``, keeping prepared statements."""
        self._keeping_prepared(f"ROLLBACK TO SAVEPOINT {savepoint}".encode())

    def _keeping_prepared(self, command: bytes) -> None:
        """Send ``command`` as psycopg sends its own rollback, but keep the prepared statements.

        psycopg forgets every prepared statement of the session at any ``ROLLBACK``, and has the
        server drop them (``DEALLOCATE ALL``), in case the transaction dropped what they use. A
        unit of work never changes the schema, so they stay valid: keeping them spares a read
        unit a round trip and the parsing and planning of its statements (ADR 0108).
        """
        with self.lock:
            self.wait(self._exec_command(command))


def session_of(conn: psycopg.Connection[Any]) -> UnitConnection | None:
    """``conn`` when it batches and remembers (a unit of work's), else None (a plain one)."""
    return conn if isinstance(conn, UnitConnection) else None


def roll_back_to(conn: psycopg.Connection[Any], savepoint: str) -> None:
    """Roll ``conn`` back to ``savepoint``; a unit of work's keeps its prepared statements."""
    session = session_of(conn)
    if session is None:
        conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
    else:
        session.roll_back_to(savepoint)
