"""Tasks the task suites offer, and how they offer and claim them."""

from datetime import datetime, timedelta
from typing import Any

import attrs

from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.tasks.model import Claim, Task
from ecp_core.testing.samples import NOW

LATER = NOW + timedelta(seconds=61)
"""Past the default lock time of a claim at NOW."""


def task(
    task_id: str,
    *,
    tenant: str = "t1",
    topic: str = "charge",
    created_at: datetime = NOW,
    **changes: Any,
) -> Task:
    """A waiting task of ``tenant`` on ``topic``; ``changes`` override any other field."""
    offered = Task(
        task_id=task_id,
        tenant_id=tenant,
        run_id=f"run-{task_id}",
        node_id="pay",
        topic=topic,
        arguments={"amount": "12.50", "nested": [1, {"k": None}]},
        state={"order": {"id": 7}},
        created_at=created_at,
        updated_at=created_at,
    )
    return attrs.evolve(offered, **changes)


def take_now(
    uow: UnitOfWorkFactory,
    *,
    now: datetime = NOW,
    worker: str = "w1",
    topics: tuple[str, ...] = ("charge",),
    tenant: str = "t1",
    lock_seconds: int | None = None,
    limit: int = 10,
) -> list[Claim]:
    """Claim and commit; the claims, each with its lost attempt."""
    with uow() as tx:
        claims = tx.tasks.claim(
            tenant, topics, worker_id=worker, now=now, lock_seconds=lock_seconds, limit=limit
        )
        tx.commit()
    return claims


def claim_now(uow: UnitOfWorkFactory, **options: Any) -> list[Task]:
    """Claim and commit as :func:`take_now` does (``options`` are its); the tasks claimed."""
    return [claim.task for claim in take_now(uow, **options)]


def offer_all(uow: UnitOfWorkFactory, *tasks: Task) -> None:
    """Offer ``tasks`` and commit."""
    with uow() as tx:
        for offered in tasks:
            tx.tasks.offer(offered)
        tx.commit()
