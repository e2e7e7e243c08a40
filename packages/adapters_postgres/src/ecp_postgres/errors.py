"""Driver errors that mean the database is away, as the core's :class:`DatabaseUnavailable`.

One class for the whole story: start-up refusals (``ecp serve``'s one line) raise it, and so
does a unit of work whose connection broke or could not be had in time (a 503 over HTTP), or
whose transaction the database undid to break a deadlock with another (ADR 0107): nothing of it
was kept, and the same request may be tried again.
"""

from typing import Any

import psycopg
from psycopg_pool import PoolClosed, PoolTimeout

from ecp_core.errors import DatabaseFull, DatabaseUnavailable

__all__ = ["CONTENTION_DETAIL", "DETAIL", "FULL_DETAIL", "DatabaseUnavailable", "unavailable"]

DETAIL = "the database is unavailable; try again shortly"
FULL_DETAIL = "the database is out of disk space; nothing was written; try again once it has room"
CONTENTION_DETAIL = (
    "the database undid this request to break a deadlock with another; nothing was written; "
    "try again"
)
DISK_FULL = "53100"
CONTENTION = ("40001", "40P01")
"""A serialization failure and a deadlock detected: the database undid the statement's work."""

_SQLSTATES = ("08", "53", "57P01", "57P02", "57P03")
"""Connection exceptions, insufficient resources, and the server shutting down or starting."""


def unavailable(
    exc: BaseException, conn: psycopg.Connection[Any] | None = None
) -> DatabaseUnavailable | None:
    """The core error for ``exc`` when it means the database is away; None for any other error.

    Away: no connection within the pool's wait (or the pool closed); ``conn`` closed under the
    statement (the session was killed, the server stopped or crashed); a server error of the
    classes above; or the statement undone to break a deadlock (:data:`CONTENTION`). Anything
    else (a bug, a constraint) stays what it is.
    """
    if isinstance(exc, PoolTimeout | PoolClosed):
        return DatabaseUnavailable(DETAIL)
    if not isinstance(exc, psycopg.Error):
        return None
    lost = conn is not None and conn.closed
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if not lost and sqlstate == DISK_FULL:
        return DatabaseFull(FULL_DETAIL)
    if not lost and sqlstate in CONTENTION:
        return DatabaseUnavailable(CONTENTION_DETAIL)
    if lost or (isinstance(exc, psycopg.OperationalError) and sqlstate.startswith(_SQLSTATES)):
        return DatabaseUnavailable(DETAIL, connection_lost=lost)
    return None
