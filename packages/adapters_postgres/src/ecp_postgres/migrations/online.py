"""The online-migration rule: no step holds an exclusive lock on a table that grows with use.

Processes of two releases serve one database during an upgrade, so a migration may not stop the
tables every request writes while it rewrites or scans them. On a table that grows with use
(:data:`GROWING`), created by an earlier migration, a migration must:

- build an index with ``CREATE INDEX CONCURRENTLY``, which cannot run in a transaction, so the
  file says ``-- transactional: false`` (a concurrent build in a transactional file fails);
- add a column nullable, or with a constant default (no table rewrite), never ``NOT NULL``
  without a default;
- add a check or foreign key ``NOT VALID`` (validated by a later step, which takes a weaker lock);
- not change a column's type, set ``NOT NULL``, ``LOCK`` it, ``CLUSTER``, ``VACUUM FULL`` or
  ``REINDEX`` it without ``CONCURRENTLY``;
- not ``UPDATE`` or ``DELETE`` its rows: a backfill runs in batches outside the migration.

:func:`violations` reads a migration's SQL (comments and dollar-quoted bodies skipped) and names
each step that breaks the rule. A table the same migration creates is new and empty, so nothing
waits on it.
"""

import re
from collections.abc import Iterator

GROWING = frozenset(
    {
        "ecp_runs",
        "ecp_audit_records",
        "ecp_audit_heads",
        "ecp_audit_salts",
        "ecp_approvals",
        "ecp_approval_actions",
        "ecp_tasks",
        "ecp_webhook_deliveries",
        "ecp_webhook_attempts",
        "ecp_evidence_executions",
        "ecp_evidence_outcomes",
        "ecp_evidence_revisions",
        "ecp_retention_audit_log",
        "ecp_log_pending",
        "ecp_log_leaves",
        "ecp_log_tiles",
        "ecp_log_heads",
        "ecp_connector_costs",
        "ecp_connector_tests",
        "ecp_certification_events",
        "ecp_decisions",
        "ecp_merchant_events",
    }
)
"""Tables whose rows grow with runs, records, tasks, events and deliveries."""

_TABLE = r"(?:ONLY\s+)?(?:IF\s+EXISTS\s+)?(?:public\.)?\"?(\w+)\"?"
_CREATED = re.compile(
    r"CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE
)
_INDEX = re.compile(
    r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?\w*\s*ON\s+"
    + _TABLE,
    re.IGNORECASE,
)
_ALTER = re.compile(r"ALTER\s+TABLE\s+" + _TABLE + r"\s+(.*)", re.IGNORECASE | re.DOTALL)
_WRITE = re.compile(r"(?:UPDATE|DELETE\s+FROM)\s+" + _TABLE, re.IGNORECASE)
_WHOLE = re.compile(r"(?:LOCK\s+(?:TABLE\s+)?|CLUSTER\s+|VACUUM\s+FULL\s+)" + _TABLE, re.IGNORECASE)
_REINDEX = re.compile(r"REINDEX\s+(?:TABLE|INDEX)\s+(CONCURRENTLY\s+)?" + _TABLE, re.IGNORECASE)
_DOLLAR = re.compile(r"\$(\w*)\$.*?\$\1\$", re.DOTALL)


def statements(text: str) -> Iterator[str]:
    """The SQL statements of a migration file: comments and dollar-quoted bodies blanked."""
    without_bodies = _DOLLAR.sub("$$", text)
    lines = [line.split("--", 1)[0] for line in without_bodies.splitlines()]
    for statement in "\n".join(lines).split(";"):
        if statement.strip():
            yield " ".join(statement.split())


def _column_problem(table: str, clause: str) -> str | None:
    if "NOT NULL" in clause and "DEFAULT" not in clause:
        return f"{table}: a NOT NULL column without a default (add it nullable)"
    default = re.search(r"DEFAULT\s+(.*)", clause)
    if default and "(" in default.group(1):
        return f"{table}: a column whose default is computed per row rewrites the table"
    return None


def _constraint_problem(table: str, clause: str) -> str | None:
    checked = any(k in clause for k in ("CHECK", "FOREIGN KEY", "REFERENCES"))
    if checked and "NOT VALID" not in clause:
        return f"{table}: a constraint added without NOT VALID scans under a lock"
    unique = "UNIQUE" in clause or "PRIMARY KEY" in clause
    if unique and "USING INDEX" not in clause:
        return f"{table}: a unique constraint builds its index under a lock"
    return None


def _clause_problem(table: str, clause: str) -> str | None:
    if clause.startswith(("ADD CONSTRAINT", "ADD FOREIGN")):
        return _constraint_problem(table, clause)
    if clause.startswith("ADD "):
        return _column_problem(table, clause)
    if clause.startswith("ALTER") and re.search(r"\bTYPE\b", clause):
        return f"{table}: changing a column's type rewrites the table"
    if clause.startswith("ALTER") and "SET NOT NULL" in clause:
        return f"{table}: SET NOT NULL scans the table under an exclusive lock"
    return None


def _alter_problems(table: str, action: str) -> Iterator[str]:
    for clause in re.split(r",\s*(?=ADD|ALTER|DROP|VALIDATE|SET|RENAME)", action.upper()):
        if (problem := _clause_problem(table, clause)) is not None:
            yield problem


def violations(text: str, *, transactional: bool) -> list[str]:
    """Each step of a migration's SQL that breaks the online rule (none: it is online)."""
    created: set[str] = set()
    found: list[str] = []
    for statement in statements(text):
        if made := _CREATED.match(statement):
            created.add(made.group(1).lower())
            continue
        found.extend(_problems(statement, created, transactional=transactional))
    return found


def _index_problems(statement: str, created: set[str], *, transactional: bool) -> Iterator[str]:
    if index := _INDEX.match(statement):
        concurrent, table = index.group(1), index.group(2).lower()
        if concurrent and transactional:
            yield f"{table}: CREATE INDEX CONCURRENTLY needs '-- transactional: false'"
        elif not concurrent and table in GROWING and table not in created:
            yield f"{table}: CREATE INDEX without CONCURRENTLY blocks writes while it builds"
    elif (reindex := _REINDEX.match(statement)) and not reindex.group(1):
        yield f"{reindex.group(2).lower()}: REINDEX without CONCURRENTLY blocks writes"


def _problems(statement: str, created: set[str], *, transactional: bool) -> Iterator[str]:
    if _INDEX.match(statement) or _REINDEX.match(statement):
        yield from _index_problems(statement, created, transactional=transactional)
        return
    for pattern in (_ALTER, _WRITE, _WHOLE):
        if (match := pattern.match(statement)) is None:
            continue
        table = match.group(1).lower()
        if table not in GROWING or table in created:
            return
        if pattern is _ALTER:
            yield from _alter_problems(table, match.group(2))
        elif pattern is _WRITE:
            yield f"{table}: rows rewritten in the migration (backfill in batches outside it)"
        else:
            yield f"{table}: {statement.split(maxsplit=1)[0].upper()} takes the whole table"
        return


__all__ = ["GROWING", "statements", "violations"]
