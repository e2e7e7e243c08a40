"""TaskRepository on PostgreSQL: claims skip rows other workers hold; rules are the core's."""

from collections.abc import Collection
from datetime import datetime

from ecp_core.errors import exists, missing
from ecp_core.runs.tasks import rules
from ecp_core.runs.tasks.model import Claim, Task, TaskStatus, TopicQueue, new_lock_token
from ecp_core.runs.tasks.rules import LOCK_EXPIRED
from ecp_core.runs.tasks.storage import RuleApplyingTasks
from ecp_postgres.rows import Repository, Table
from ecp_postgres.session import PendingWrite

TASKS = Table("ecp_tasks", Task, jsonb=["arguments", "state", "output"])

# The statuses are written into the SQL rather than passed, so the partial index still applies
# once psycopg prepares the claim and a generic plan is used.
_CLAIMABLE = (
    f"(status = '{TaskStatus.WAITING.value}' AND (not_before IS NULL OR not_before <= %(now)s))"
    f" OR (status = '{TaskStatus.LOCKED.value}' AND locked_until <= %(now)s"
    " AND attempt < max_attempts)"
)
_OPEN = f"status IN ('{TaskStatus.WAITING.value}', '{TaskStatus.LOCKED.value}')"
_WAITING = f"status = '{TaskStatus.WAITING.value}'"
_LOCKED = f"status = '{TaskStatus.LOCKED.value}'"
# One grouped scan of the tenant's open tasks (the partial index ecp_tasks_open serves it).
_TOPICS = f"""
SELECT topic,
  count(*) FILTER (WHERE {_WAITING}) AS waiting,
  count(*) FILTER (WHERE {_LOCKED} AND locked_until > %(now)s) AS locked,
  count(*) FILTER (WHERE {_LOCKED} AND locked_until <= %(now)s) AS expired,
  min(created_at) FILTER (WHERE {_WAITING}) AS oldest_waiting_at
FROM ecp_tasks
WHERE tenant_id = %(tenant)s AND {_OPEN}
  AND (%(after)s::text IS NULL OR topic > %(after)s::text)
GROUP BY topic ORDER BY topic LIMIT %(limit)s
"""  # noqa: S608 - fixed text


# A claim in one statement: the claimable tasks of the topics, oldest first, rows other
# transactions hold skipped, each written as ``rules.take`` makes it: claimed under one of the
# tokens, its attempt counted, a lock that ran out marked lost. ``was`` is the row before (the
# lost attempt is recorded from it). ``row_number() OVER ()`` only pairs rows with tokens.
_TAKE = f"""
WITH picked AS (
  SELECT * FROM ecp_tasks
  WHERE tenant_id = %(tenant)s AND {{topics}} AND {_OPEN} AND ({_CLAIMABLE})
  ORDER BY created_at, task_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), numbered AS (
  SELECT picked.*, row_number() OVER () AS n FROM picked
)
UPDATE ecp_tasks t SET
  status = '{TaskStatus.LOCKED.value}',
  attempt = t.attempt + 1,
  worker_id = %(worker)s,
  lock_token = (%(tokens)s::text[])[numbered.n],
  locked_until = %(now)s + make_interval(secs => COALESCE(%(lock_seconds)s::int, t.lock_seconds)),
  not_before = NULL,
  error = CASE WHEN numbered.status = '{TaskStatus.LOCKED.value}'
    THEN '{LOCK_EXPIRED}' ELSE t.error END,
  updated_at = %(now)s
FROM numbered
WHERE t.task_id = numbered.task_id
RETURNING {", ".join(f"t.{column}" for column in TASKS.columns)},
  to_jsonb(numbered) - 'n' AS was
"""  # noqa: S608 - fixed text


class PostgresTasks(Repository, RuleApplyingTasks):
    """TaskRepository on PostgreSQL."""

    def offer(self, task: Task) -> None:
        """Store a new task; the write waits in the unit of work's batch.

        Conflict when its id exists, in any tenant, at the next statement or commit.
        """
        self._write(
            PendingWrite(
                TASKS.insert_sql(on_conflict_nothing=True),
                TASKS.params(task),
                expected=1,
                error=lambda: exists("task", task.task_id),
            )
        )

    def get(self, tenant_id: str, task_id: str) -> Task | None:
        """One task of the tenant, or None."""
        return self._one(TASKS, "task_id = %s AND tenant_id = %s", (task_id, tenant_id))

    def _held(self, tenant_id: str, task_id: str) -> Task:
        """The task, locked until the transaction ends (NotFound when the tenant has none)."""
        found = self._one(TASKS, "task_id = %s AND tenant_id = %s FOR UPDATE", (task_id, tenant_id))
        if found is None:
            raise missing("task", task_id)
        return found

    def _save(self, task: Task) -> None:
        """Queue the task's update in the unit of work's batch (a later save replaces it)."""
        self._write(
            PendingWrite(
                TASKS.update_sql("task_id"),
                TASKS.params(task),
                expected=1,
                error=lambda: missing("task", task.task_id),
            ),
            ("task", task.task_id),
        )

    def claim(
        self,
        tenant_id: str,
        topics: Collection[str],
        *,
        worker_id: str,
        now: datetime,
        lock_seconds: int | None,
        limit: int,
    ) -> list[Claim]:
        """Take up to ``limit`` claimable tasks of the topics, oldest first, in one statement.

        The ``UPDATE`` writes what ``rules.take`` makes of each task it locks and hands back the
        row as it was, from which a lost attempt is made; ``tests/tasks/test_tasks_contract.py``
        holds the two adapters to the same claims. One topic is compared with ``=``:
        ``ecp_tasks_open`` then hands the tasks over in order and the scan stops at ``limit``.
        Several topics (``= ANY``) get no ordered path from that index on PostgreSQL 16;
        ``ecp_tasks_open_by_age`` gives the tenant's open tasks in order, filtered by topic, where
        the planner finds that cheaper than sorting the topics' own (ADR 0068).
        """
        listed = list(topics)
        one = len(listed) == 1
        rows = self._conn.execute(
            _TAKE.format(topics="topic = %(topics)s" if one else "topic = ANY(%(topics)s)"),
            {
                "tenant": tenant_id,
                "topics": listed[0] if one else listed,
                "now": now,
                "limit": limit,
                "worker": worker_id,
                "tokens": [new_lock_token() for _ in range(limit)],
                "lock_seconds": lock_seconds,
            },
        ).fetchall()
        claims = []
        for row in rows:
            task, was = TASKS.load(row), TASKS.load(row["was"])
            lost = rules.expire(was, now) if rules.expired(was, now) else None
            claims.append(Claim(task=task, lost=lost))
        claims.sort(key=lambda claim: (claim.task.created_at, claim.task.task_id))
        return claims

    def _expired(
        self, tenant_id: str | None, topics: Collection[str] | None, now: datetime, limit: int
    ) -> list[Task]:
        """Locked tasks whose lock ran out, soonest first; rows others hold are skipped."""
        rows = self._conn.execute(
            f"{TASKS.select_sql()} WHERE status = '{TaskStatus.LOCKED.value}'"
            " AND locked_until <= %(now)s"
            " AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s::text)"
            " AND (%(topics)s::text[] IS NULL OR topic = ANY(%(topics)s::text[]))"
            " ORDER BY locked_until, task_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
            {
                "tenant": tenant_id,
                "topics": None if topics is None else list(topics),
                "now": now,
                "limit": limit,
            },
        ).fetchall()
        return [TASKS.load(row) for row in rows]

    def _open_of_run(self, tenant_id: str, run_id: str) -> list[Task]:
        """The run's open tasks by id, locked for this transaction (waits for their holders)."""
        rows = self._conn.execute(
            f"{TASKS.select_sql()} WHERE tenant_id = %s AND run_id = %s AND {_OPEN}"
            " ORDER BY task_id FOR UPDATE",
            (tenant_id, run_id),
        ).fetchall()
        return [TASKS.load(row) for row in rows]

    def erase_run(self, tenant_id: str, run_id: str) -> int:
        """Empty the payloads of a run's tasks; how many changed."""
        return self._conn.execute(
            "UPDATE ecp_tasks SET arguments = '{}', state = '{}', error = NULL,"
            " output = CASE WHEN output IS NULL THEN NULL ELSE '{}'::jsonb END"
            " WHERE tenant_id = %s AND run_id = %s AND (arguments <> '{}' OR state <> '{}'"
            " OR error IS NOT NULL OR (output IS NOT NULL AND output <> '{}'))",
            (tenant_id, run_id),
        ).rowcount

    def for_run(self, tenant_id: str, run_id: str, *, limit: int) -> list[Task]:
        """The run's tasks, the oldest first (index ``ecp_tasks_by_run``)."""
        rows = self._conn.execute(
            f"{TASKS.select_sql()} WHERE tenant_id = %s AND run_id = %s"
            " ORDER BY created_at, task_id LIMIT %s",
            (tenant_id, run_id, limit),
        ).fetchall()
        return [TASKS.load(row) for row in rows]

    def page(
        self,
        tenant_id: str,
        *,
        status: TaskStatus | None = None,
        topic: str | None = None,
        limit: int,
        after: str | None = None,
    ) -> list[Task]:
        """The tenant's tasks by id, after ``after``, optionally of one status and topic."""
        rows = self._conn.execute(
            f"{TASKS.select_sql()} WHERE tenant_id = %(tenant)s"
            " AND (%(status)s::text IS NULL OR status = %(status)s::text)"
            " AND (%(topic)s::text IS NULL OR topic = %(topic)s::text)"
            " AND (%(after)s::text IS NULL OR task_id > %(after)s::text)"
            " ORDER BY task_id LIMIT %(limit)s",
            {
                "tenant": tenant_id,
                "status": None if status is None else status.value,
                "topic": topic,
                "after": after,
                "limit": limit,
            },
        ).fetchall()
        return [TASKS.load(row) for row in rows]

    def topics(
        self, tenant_id: str, now: datetime, *, limit: int, after: str | None = None
    ) -> list[TopicQueue]:
        """The tenant's topics with open tasks by name, each with its counts (one statement)."""
        rows = self._conn.execute(
            _TOPICS, {"tenant": tenant_id, "now": now, "after": after, "limit": limit}
        ).fetchall()
        return [
            TopicQueue(
                topic=row["topic"],
                waiting=int(row["waiting"]),
                locked=int(row["locked"]),
                expired=int(row["expired"]),
                oldest_waiting_at=row["oldest_waiting_at"],
            )
            for row in rows
        ]
