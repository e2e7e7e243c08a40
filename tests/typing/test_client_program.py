"""A user's program written against ``ecp_client``: ``mypy --strict`` checks it (``make lint``).

pytest only imports it; ``tests/clients/test_client_package.py`` also runs mypy on it alone and
on a copy that misuses the client, which mypy must refuse.
"""

import asyncio
from decimal import Decimal

from ecp_client import AsyncClient, Client, EcpError, RetryPolicy
from ecp_client.models import ApprovalRecord, ClaimedTask, RunStatusResponse
from ecp_client.problems import ApprovalAlreadyResolved, NotFound
from ecp_client.webhooks import WebhookVerificationFailed, verify
from ecp_client.worker import TaskWorker, WorkerOptions


def approve_all(client: Client, deployment_ref: str) -> list[str]:
    """Approve every pending approval of a deployment; the runs that moved on."""
    moved: list[str] = []
    for approval in client.approvals.list(status="pending", deployment_ref=deployment_ref):
        pending: ApprovalRecord = approval
        try:
            answer = client.approvals.resolve(pending, "approve", reason="batch")
        except ApprovalAlreadyResolved:
            continue
        moved.append(answer.run.run_id)
    return moved


def status_of(client: Client, run_id: str) -> str | None:
    """A run's status, or None when there is no such run."""
    try:
        run: RunStatusResponse = client.runs.get(run_id)
    except NotFound:
        return None
    except EcpError as exc:
        raise RuntimeError(f"{exc.code} (request {exc.request_id})") from exc
    return run.status


async def start_many(url: str, token: str, count: int) -> list[str]:
    """Start ``count`` runs and list every run id, with the async client."""
    async with AsyncClient(url, token=token, retry=RetryPolicy(deadline=30.0)) as client:
        for n in range(count):
            await client.runs.start("refunds", {"n": n}, idempotency_key=f"start-{n}")
        return [run.run_id async for run in client.runs.list(page_size=50)]


def charge(task: ClaimedTask) -> dict[str, object]:
    """A worker function: the charged amount, as money."""
    return {"charged": Decimal(str(task.arguments["amount"])), "attempt": task.attempt}


def work(url: str, api_key: str) -> int:
    """Run the charging worker until stopped."""
    options = WorkerOptions(url=url, topics=("payments.charge",), worker_id="w-1")
    return TaskWorker(options, charge, api_key=api_key).run()


def receive(headers: dict[str, str], body: bytes, secret: str) -> int:
    """A webhook receiver's answer."""
    try:
        event = verify(headers, body, secret)
    except WebhookVerificationFailed:
        return 400
    return 204 if isinstance(event.get("event_id"), str) else 422


def main() -> None:
    """Every function above, typed as a user would call them."""
    asyncio.run(start_many("http://127.0.0.1:8000", "token", 3))
