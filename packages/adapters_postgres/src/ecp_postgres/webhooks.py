"""WebhookRepository on PostgreSQL: subscriptions, the delivery outbox and its attempts."""

from datetime import datetime

from ecp_core.errors import exists, missing
from ecp_core.webhooks.health import DeliveryCounts, EndpointHealth
from ecp_core.webhooks.model import (
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    WebhookEventType,
    WebhookSubscription,
)
from ecp_postgres.rows import Repository, Table
from ecp_postgres.session import PendingWrite, session_of

SUBSCRIPTIONS = Table("ecp_webhook_subscriptions", WebhookSubscription, jsonb=["event_types"])
DELIVERIES = Table("ecp_webhook_deliveries", Delivery, jsonb=["payload"])
ATTEMPTS = Table("ecp_webhook_attempts", DeliveryAttempt)

# The SQL twin of ecp_core.webhooks.health.attempt_outcome (held equal by the webhook
# conformance suite): 2xx delivered; 4xx but 408 and 429 rejected; anything else failed.
_DELIVERED = "a.status_code BETWEEN 200 AND 299"
_REJECTED = "a.status_code BETWEEN 400 AND 499 AND a.status_code NOT IN (408, 429)"
# Test events (webhook.test) are not counted (ADR 0054).
_COUNTED = "event_type <> 'webhook.test'"
_COUNTS = f"""
SELECT
  (SELECT count(*) FROM ecp_webhook_deliveries
    WHERE tenant_id = %(tenant)s AND status = 'pending' AND {_COUNTED}) AS queue_depth,
  (SELECT count(*) FROM ecp_webhook_deliveries
    WHERE tenant_id = %(tenant)s AND created_at >= %(since)s AND {_COUNTED}) AS queued,
  (SELECT count(*) FROM ecp_webhook_deliveries
    WHERE tenant_id = %(tenant)s AND updated_at >= %(since)s AND status = 'dead'
      AND {_COUNTED}) AS abandoned,
  t.delivered, t.retried, t.rejected, t.failed
FROM (
  SELECT
    count(*) FILTER (WHERE {_DELIVERED}) AS delivered,
    count(*) FILTER (WHERE a.attempt > 1) AS retried,
    count(*) FILTER (WHERE {_REJECTED}) AS rejected,
    count(*) FILTER (WHERE a.status_code IS NULL OR NOT ({_DELIVERED} OR {_REJECTED})) AS failed
  FROM ecp_webhook_deliveries d
  JOIN ecp_webhook_attempts a ON a.delivery_id = d.delivery_id AND a.occurred_at >= %(since)s
  WHERE d.tenant_id = %(tenant)s AND d.updated_at >= %(since)s AND d.{_COUNTED}
) t
"""  # noqa: S608 - fixed text

_ENDPOINTS = """
SELECT subscription_id,
  count(*) FILTER (WHERE status = 'pending') AS pending,
  count(*) FILTER (WHERE status = 'delivered') AS delivered,
  count(*) FILTER (WHERE status = 'dead') AS dead,
  (array_agg(last_status_code ORDER BY updated_at DESC, delivery_id DESC)
    FILTER (WHERE attempts > 0))[1] AS last_status_code,
  max(updated_at) FILTER (WHERE attempts > 0) AS last_attempt_at
FROM ecp_webhook_deliveries
WHERE tenant_id = %(tenant)s AND created_at >= %(since)s
GROUP BY subscription_id ORDER BY subscription_id
"""

# claim_due and dead_letters write the status into the SQL rather than pass it as a parameter,
# so their partial indexes still apply once psycopg prepares them and a generic plan is used.
LIVE_SUBSCRIPTION = "deleted_at IS NULL"
"""SQL: a subscription row that is not deleted."""
_REVIVE = ", ".join(
    [f"{c} = EXCLUDED.{c}" for c in SUBSCRIPTIONS.columns if c != "subscription_id"]
    + ["deleted_at = NULL"]
)

# The previous secret is the current one of the row as it is when the update runs.
_ROTATE = f"""
UPDATE ecp_webhook_subscriptions
SET previous_secret = secret, previous_secret_expires_at = %s, secret = %s
WHERE subscription_id = %s AND tenant_id = %s AND {LIVE_SUBSCRIPTION}
RETURNING {SUBSCRIPTIONS.column_list}
"""  # noqa: S608 - fixed text


def subscribed_key(tenant_id: str, deployment_ref: str) -> tuple[str, str, str]:
    """The memo key of a deployment's live subscriptions (:mod:`ecp_postgres.session`)."""
    return (_SUBSCRIPTIONS_MEMO, tenant_id, deployment_ref)


_SUBSCRIPTIONS_MEMO = "subscriptions"
_LIVE = (
    f"{SUBSCRIPTIONS.select_sql()} WHERE tenant_id = %(tenant_id)s"
    f" AND deployment_ref = %(deployment_ref)s AND {LIVE_SUBSCRIPTION}"
    " ORDER BY created_at, subscription_id"
)


class PostgresWebhooks(Repository):
    """WebhookRepository on PostgreSQL; deleting a subscription only marks its row deleted."""

    def add_subscription(self, subscription: WebhookSubscription) -> None:
        """Store a new subscription (Conflict when a live one has its id, in any tenant).

        The id of a deleted subscription may be used again, as in memory: the old row is
        replaced.
        """
        self._forget_subscriptions()
        sql = (
            f"{SUBSCRIPTIONS.insert_sql()} ON CONFLICT (subscription_id) DO UPDATE SET {_REVIVE}"
            " WHERE ecp_webhook_subscriptions.deleted_at IS NOT NULL"
        )
        if self._conn.execute(sql, SUBSCRIPTIONS.params(subscription)).rowcount != 1:
            raise exists("subscription", subscription.subscription_id)

    def subscription(self, tenant_id: str, subscription_id: str) -> WebhookSubscription | None:
        """One live subscription of the tenant, or None."""
        return self._one(
            SUBSCRIPTIONS,
            f"subscription_id = %s AND tenant_id = %s AND {LIVE_SUBSCRIPTION}",
            (subscription_id, tenant_id),
        )

    def subscriptions(self, tenant_id: str) -> list[WebhookSubscription]:
        """The tenant's live subscriptions, oldest first."""
        return self._all(
            SUBSCRIPTIONS,
            f"WHERE tenant_id = %s AND {LIVE_SUBSCRIPTION} ORDER BY created_at, subscription_id",
            (tenant_id,),
        )

    def matching(
        self, tenant_id: str, deployment_ref: str, event_type: WebhookEventType
    ) -> list[WebhookSubscription]:
        """Live subscriptions of the deployment that asked for the event type, oldest first.

        The deployment's live subscriptions are read once per transaction (by the run's lock,
        ``PostgresRuns.lock``, or here) and each event picks its own from them.
        """
        return [s for s in self.live_for(tenant_id, deployment_ref) if event_type in s.event_types]

    def _forget_subscriptions(self) -> None:
        """A subscription changes in this transaction: read them afresh next time."""
        memo = self._memo()
        for key in [
            key for key in memo if isinstance(key, tuple) and key[0] == _SUBSCRIPTIONS_MEMO
        ]:
            del memo[key]

    def live_for(
        self, tenant_id: str, deployment_ref: str, *, before_writes: bool = False
    ) -> list[WebhookSubscription]:
        """The deployment's live subscriptions, oldest first (read once per transaction).

        ``before_writes``: read without sending the unit of work's queued writes first, for a
        caller whose queued writes change no subscription (a run's lock, ``ecp_postgres.run_context``).
        """
        memo = self._memo()
        key = subscribed_key(tenant_id, deployment_ref)
        if key not in memo:
            session = session_of(self._conn)
            params = {"tenant_id": tenant_id, "deployment_ref": deployment_ref}
            cursor = (
                session.execute_before_writes(_LIVE, params)
                if before_writes and session is not None
                else self._conn.execute(_LIVE, params)
            )
            memo[key] = [SUBSCRIPTIONS.load(row) for row in cursor.fetchall()]
        live: list[WebhookSubscription] = memo[key]
        return live

    def delete_subscription(self, tenant_id: str, subscription_id: str) -> bool:
        """Stop a live subscription of the tenant (its deliveries stay); False when none."""
        self._forget_subscriptions()
        cursor = self._conn.execute(
            "UPDATE ecp_webhook_subscriptions SET deleted_at = now()"
            " WHERE subscription_id = %s AND tenant_id = %s AND deleted_at IS NULL",
            (subscription_id, tenant_id),
        )
        return cursor.rowcount == 1

    def rotate_secret(
        self, tenant_id: str, subscription_id: str, secret: str, previous_expires_at: datetime
    ) -> WebhookSubscription | None:
        """Make ``secret`` current; the current one signs beside it until ``previous_expires_at``.

        One statement: a concurrent rotation waits for the row and then moves the secret it
        wrote, so no secret that was handed out is lost.
        """
        self._forget_subscriptions()
        row = self._conn.execute(
            _ROTATE, (previous_expires_at, secret, subscription_id, tenant_id)
        ).fetchone()
        return None if row is None else SUBSCRIPTIONS.load(row)

    def drop_expired_secrets(self, now: datetime) -> int:
        """Forget previous secrets whose overlap ended by ``now`` (deleted rows' too)."""
        return self._conn.execute(
            "UPDATE ecp_webhook_subscriptions"
            " SET previous_secret = NULL, previous_secret_expires_at = NULL"
            " WHERE previous_secret_expires_at <= %s",
            (now,),
        ).rowcount

    def add_delivery(self, delivery: Delivery) -> None:
        """Queue a delivery (Conflict when its id exists, in any tenant).

        The write waits in the unit of work's batch (ADR 0059).
        """
        self._write(
            PendingWrite(
                DELIVERIES.insert_sql(on_conflict_nothing=True),
                DELIVERIES.params(delivery),
                expected=1,
                error=lambda: exists("delivery", delivery.delivery_id),
            )
        )

    def delivery(self, tenant_id: str, delivery_id: str) -> Delivery | None:
        """One delivery of the tenant, or None."""
        return self._one(
            DELIVERIES, "delivery_id = %s AND tenant_id = %s", (delivery_id, tenant_id)
        )

    def save_delivery(self, delivery: Delivery) -> None:
        """Replace a stored delivery of the same tenant (NotFound otherwise)."""
        sql = DELIVERIES.update_sql("delivery_id") + " AND tenant_id = %(tenant_id)s"
        if self._conn.execute(sql, DELIVERIES.params(delivery)).rowcount != 1:
            raise missing("delivery", delivery.delivery_id)

    def claim_due(self, now: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries due by ``now``, oldest first, locked until the transaction ends.

        Rows another transaction holds are skipped (``SKIP LOCKED``), so concurrent workers
        never claim the same delivery.
        """
        return self._all(
            DELIVERIES,
            f"WHERE status = '{DeliveryStatus.PENDING.value}' AND next_attempt_at <= %s"
            " ORDER BY next_attempt_at, delivery_id LIMIT %s FOR UPDATE SKIP LOCKED",
            (now, limit),
        )

    def next_due(self) -> datetime | None:
        """The earliest next attempt of a pending delivery (the claim's index answers it)."""
        row = self._conn.execute(
            "SELECT min(next_attempt_at) AS due FROM ecp_webhook_deliveries WHERE status = %s",
            (DeliveryStatus.PENDING.value,),
        ).fetchone()
        return None if row is None else row["due"]

    def add_attempt(self, attempt: DeliveryAttempt) -> None:
        """Record one POST (Conflict when the delivery already has that attempt number)."""
        self._insert(
            ATTEMPTS,
            attempt,
            exists("attempt", f"{attempt.attempt} of delivery {attempt.delivery_id}"),
        )

    def attempts(self, tenant_id: str, delivery_id: str) -> list[DeliveryAttempt]:
        """A delivery's attempts by number; none when the tenant has no such delivery."""
        return self._all(
            ATTEMPTS,
            "WHERE delivery_id = %s AND EXISTS (SELECT 1 FROM ecp_webhook_deliveries d"
            " WHERE d.delivery_id = ecp_webhook_attempts.delivery_id AND d.tenant_id = %s)"
            " ORDER BY attempt",
            (delivery_id, tenant_id),
        )

    def dead_letters(
        self, tenant_id: str, *, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """The tenant's dead deliveries by id, newest first, older than ``before`` when given."""
        dead = f"WHERE tenant_id = %s AND status = '{DeliveryStatus.DEAD.value}'"
        if before is None:
            return self._all(
                DELIVERIES, f"{dead} ORDER BY delivery_id DESC LIMIT %s", (tenant_id, limit)
            )
        return self._all(
            DELIVERIES,
            f"{dead} AND delivery_id < %s ORDER BY delivery_id DESC LIMIT %s",
            (tenant_id, before, limit),
        )

    def deliveries(
        self,
        tenant_id: str,
        *,
        limit: int,
        before: str | None = None,
        status: DeliveryStatus | None = None,
    ) -> list[Delivery]:
        """The tenant's deliveries by id, newest first, of one status when given (one statement)."""
        rows = self._conn.execute(
            f"{DELIVERIES.select_sql()} WHERE tenant_id = %(tenant)s"
            " AND (%(status)s::text IS NULL OR status = %(status)s::text)"
            " AND (%(before)s::text IS NULL OR delivery_id < %(before)s::text)"
            " ORDER BY delivery_id DESC LIMIT %(limit)s",
            {
                "tenant": tenant_id,
                "status": None if status is None else status.value,
                "before": before,
                "limit": limit,
            },
        ).fetchall()
        return [DELIVERIES.load(row) for row in rows]

    def endpoint_health(self, tenant_id: str, since: datetime) -> list[EndpointHealth]:
        """Per subscription, its deliveries queued since ``since`` by status, and the last answer."""
        rows = self._conn.execute(_ENDPOINTS, {"tenant": tenant_id, "since": since}).fetchall()
        return [
            EndpointHealth(
                subscription_id=row["subscription_id"],
                pending=int(row["pending"]),
                delivered=int(row["delivered"]),
                dead=int(row["dead"]),
                last_status_code=row["last_status_code"],
                last_attempt_at=row["last_attempt_at"],
            )
            for row in rows
        ]

    def delivery_counts(self, tenant_id: str, since: datetime) -> DeliveryCounts:
        """The tenant's outbox figures: pending now, and attempts and deliveries since ``since``.

        Counted in one statement over the tenant's indexes (ADR 0042); attempts are found
        through the deliveries updated since ``since``.
        """
        row = self._conn.execute(_COUNTS, {"tenant": tenant_id, "since": since}).fetchone()
        assert row is not None  # noqa: S101 - an aggregate always answers one row
        return DeliveryCounts(**{name: int(value) for name, value in row.items()})
