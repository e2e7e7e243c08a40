"""Dispatch bookkeeping rules: how many tenants' runs a claim weighs, and the failure backoff.

A run whose dispatch raises is retried after a backoff that doubles with each failure in a row,
up to a cap; after ``max_attempts`` failures in a row it ends FAILED with ``dispatch_error``
(ADR 0019). The schedule reuses the webhook retry policy's exponential ceiling, without jitter.
"""

from datetime import timedelta

from ecp_core.webhooks.schedule import RetrySchedule

CLAIM_CANDIDATE_BUDGET = 32
"""About how many runs one claim weighs, shared among the tenants with runnable runs."""


def candidates_per_tenant(tenants: int) -> int:
    """How many of each tenant's oldest eligible runs a claim weighs: ``ceil(32 / tenants)``.

    A single tenant offers 32, so up to 32 workers can hold its runs at once; with many tenants
    each offers at least its oldest, and the claim stays cheap. A claim finds nothing only when
    every offered run is held by another transaction.
    """
    return max(1, -(-CLAIM_CANDIDATE_BUDGET // max(tenants, 1)))


DISPATCH_BACKOFF_CAP_SECONDS = 300.0
"""The longest a run waits between two failed dispatches."""

DISPATCH_RETRY = RetrySchedule(
    max_attempts=3, base_seconds=1.0, max_seconds=DISPATCH_BACKOFF_CAP_SECONDS
)
"""The server's ``ECP_DISPATCH_MAX_ATTEMPTS`` (3) and ``ECP_DISPATCH_BACKOFF_SECONDS`` (1), capped at 300 s."""


def dispatch_backoff(policy: RetrySchedule, failures: int) -> timedelta:
    """How long a run waits after its ``failures``-th failed dispatch in a row (from 1).

    ``base * 2 ** (failures - 1)``, never more than ``policy.max_seconds``.
    """
    return timedelta(seconds=policy.ceiling(failures))
