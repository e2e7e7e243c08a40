"""The run path's floor: plain psycopg sending the statements one ECP run sent. Not run.

:func:`capture` notes the statements, parameters and commits of one call (an ECP run) and the
ids the run made; :class:`Replay` sends the same statements again on a plain psycopg connection,
each time with the run's ids changed, so that the rows are new and every transaction commits.
What the replay costs is what the database and the driver cost for a run, with none of ECP's
Python (the engine, the models, sealing, the adapter's row mapping): the difference is what ECP
itself adds, and the replay's rate is the most any Python on top of these statements could reach.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import pq
from psycopg.rows import dict_row

from _rounds import Figure, Timing, paired_ratio, rate_line
from _statements import spied
from ecp_core.system import UuidV7Factory
from ecp_postgres.session import UnitConnection

ID_TAIL = 12
"""The hex digits at the end of an id that a replay replaces with its own number."""


@dataclass(frozen=True)
class Statement:
    """One statement as sent: by a raw cursor (``$n`` placeholders) or not, and its parameters.

    ``with_ids`` holds the positions (or names) of the parameters that contain one of the run's
    ids, with the ids each contains.
    """

    raw: bool
    query: Any
    params: Any
    with_ids: tuple[tuple[Any, tuple[str, ...]], ...]

    def params_for(self, renamed: dict[str, str]) -> Any:
        """The parameters with each of the run's ids renamed as ``renamed`` says."""
        if not self.with_ids:
            return self.params
        params = dict(self.params) if isinstance(self.params, dict) else list(self.params)
        for key, ids in self.with_ids:
            value = params[key]
            for old in ids:
                value = value.replace(old, renamed[old])
            params[key] = value
        return params


def _with_ids(params: Any, ids: set[str]) -> tuple[tuple[Any, tuple[str, ...]], ...]:
    if params is None:
        return ()
    keyed = params.items() if isinstance(params, dict) else enumerate(params)
    found = []
    for key, value in keyed:
        if isinstance(value, str):
            inside = tuple(old for old in ids if old in value)
            if inside:
                found.append((key, inside))
    return tuple(found)


def capture(call: Callable[[], object]) -> tuple[list[list[Statement]], int]:
    """The transactions ``call`` committed (each a list of statements) and how many ids it made.

    Raises SystemExit when ``call`` rolled back a transaction or left one open.
    """
    sent: list[tuple[bool, Any, Any]] = []
    ends: list[int] = []
    ids: set[str] = set()

    def rolled_back(conn: psycopg.Connection[Any]) -> None:
        if conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            ends.append(-1)

    with (
        spied(
            psycopg.Cursor,
            "execute",
            lambda cursor, _, query, params=None, **__: sent.append(
                (isinstance(cursor, psycopg.RawCursor), query, params)
            ),
        ),
        spied(psycopg.Connection, "commit", lambda *_: ends.append(len(sent)), before=True),
        spied(psycopg.Connection, "rollback", rolled_back, before=True),
        spied(UnitConnection, "rollback", rolled_back, before=True),
        spied(UuidV7Factory, "new_id", lambda _, made: ids.add(made)),
    ):
        call()
    if -1 in ends or not ends or ends[-1] != len(sent):
        raise SystemExit("the captured run did not end each of its transactions by a commit")
    transactions = []
    for start, end in zip([0, *ends], ends, strict=False):
        if end > start:  # a commit with nothing sent before it committed nothing
            transactions.append(
                [
                    Statement(raw, query, params, _with_ids(params, ids))
                    for raw, query, params in sent[start:end]
                ]
            )
    return transactions, len(ids)


class Replay:
    """Sends captured transactions again on a plain psycopg connection, committing each."""

    def __init__(self, url: str, transactions: list[list[Statement]], made_ids: int) -> None:
        """Connect to ``url`` as the adapter's pool does (dict rows, UTC sessions)."""
        self.transactions = transactions
        self.made_ids = made_ids
        self.conn = psycopg.Connection.connect(url, row_factory=dict_row, options="-c TimeZone=UTC")
        self._raw = psycopg.RawCursor(self.conn)
        self._plain = self.conn.cursor()
        self._ids = sorted(
            {old for tx in transactions for s in tx for _, ids in s.with_ids for old in ids}
        )
        self._completed = 0

    @classmethod
    def of(cls, url: str, call: Callable[[], object]) -> "Replay":
        """The replay of what ``call`` (one run on the database at ``url``) sends."""
        return cls(url, *capture(call))

    def run(self, index: int) -> None:
        """Send every transaction with the run's ids made unique to ``index``; commit each."""
        tail = format(index, f"0{ID_TAIL}x")
        renamed = {old: old[:-ID_TAIL] + tail for old in self._ids}
        for transaction in self.transactions:
            for statement in transaction:
                cursor = self._raw if statement.raw else self._plain
                cursor.execute(statement.query, statement.params_for(renamed))
                if cursor.description is not None:
                    cursor.fetchall()
            self.conn.commit()

    def count_completed(self) -> int:
        """How many runs of the database are completed now (kept for :meth:`check`)."""
        row = self.conn.execute(
            "SELECT count(*) AS n FROM ecp_runs WHERE status = 'COMPLETED'"
        ).fetchone()
        self.conn.commit()
        self._completed = int(row["n"]) if row else 0
        return self._completed

    def check(self, replayed: int, others: int) -> None:
        """Stop unless ``replayed`` replays completed a run each since :meth:`count_completed`
        (``others``: the runs the real contenders completed meanwhile)."""
        before = self._completed
        completed = self.count_completed() - before - others
        if completed != replayed:
            raise SystemExit(f"the replay completed {completed} runs, not {replayed}")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def report_floor(timings: dict[str, Timing], replay: Replay) -> list[Figure]:
    """The floor beside ECP and LangGraph: what ECP's Python adds, and the most it could reach."""
    ecp, floor = timings["ecp"], timings["floor"]
    statements = sum(len(transaction) for transaction in replay.transactions)
    print(
        rate_line("plain psycopg, the same statements (floor)", floor, "runs")
        + f"  ({statements} statements in {len(replay.transactions)} commits,"
        f" {replay.made_ids} ids renamed)"
    )
    own = ecp.cpu_ms - floor.cpu_ms
    print(
        f"  ECP / the floor: {paired_ratio(ecp, floor):.2f}; ECP's own Python (client CPU beyond"
        f" the floor's): {own:.3f} ms per run"
    )
    figures = [
        Figure("ECP / the floor (its statements sent bare)", paired_ratio(ecp, floor), "x"),
        Figure("ECP's own client CPU per run, ms", own, "ms"),
    ]
    if "langgraph" in timings:
        most = paired_ratio(floor, timings["langgraph"])
        print(
            f"  the floor / LangGraph (async): {most:.2f}, the most any Python on them could reach"
        )
        figures.append(Figure("the floor / LangGraph (async)", most, "x"))
    return figures
