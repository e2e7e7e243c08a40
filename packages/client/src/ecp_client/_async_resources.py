"""The resources of ``AsyncClient``: one class per area of the API, each method one call.

Written for ``AsyncClient``; ``make clients`` writes the sync twin, ``_sync_resources.py``, by
taking ``async`` and ``await`` out (the generator's ``unasync``), so the two never drift.
"""

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TypeVar

from ecp_client import _calls as calls
from ecp_client import models as m
from ecp_client._async_sender import AsyncSender
from ecp_client._core import Call, Page

Json = Mapping[str, Any]
T = TypeVar("T")


class _Resource:
    def __init__(self, sender: AsyncSender) -> None:
        self._sender = sender

    async def _send(self, call: Call[T]) -> T:
        return await self._sender.send(call)

    def _all(self, call: Call[Page[T]]) -> AsyncIterator[T]:
        return self._sender.every(call)


class Graphs(_Resource):
    """Graph definitions and their versions."""

    async def register(self, definition: Json) -> m.GraphRegistration:
        """Register ``definition`` (a graph as JSON) as its graph's next version."""
        return await self._send(calls.register_graph(definition))

    async def get(self, graph_id: str, *, version: int | None = None) -> m.GraphVersion:
        """A graph's latest version, or ``version``."""
        return await self._send(calls.get_graph(graph_id, version))

    def list(self, *, page_size: int | None = None) -> AsyncIterator[m.GraphVersion]:
        """Every graph of the tenant, page after page."""
        return self._all(calls.list_graphs(page_size))


class Deployments(_Resource):
    """Deployments: names for graph versions that runs start from."""

    async def create(
        self,
        deployment_ref: str,
        graph_id: str,
        *,
        graph_version: int | None = None,
        max_concurrent_runs: int | None = None,
    ) -> m.Deployment:
        """Deploy ``graph_id`` (its latest version unless ``graph_version``) as ``deployment_ref``."""
        call = calls.create_deployment(deployment_ref, graph_id, graph_version, max_concurrent_runs)
        return await self._send(call)

    async def get(self, deployment_ref: str) -> m.Deployment:
        """One deployment."""
        return await self._send(calls.get_deployment(deployment_ref))

    def list(self, *, page_size: int | None = None) -> AsyncIterator[m.Deployment]:
        """Every deployment of the tenant, page after page."""
        return self._all(calls.list_deployments(page_size))

    async def pause(self, deployment_ref: str, *, reason: str | None = None) -> m.Deployment:
        """Hold new and waiting runs of the deployment."""
        return await self._send(calls.pause_deployment(deployment_ref, reason, pause=True))

    async def unpause(self, deployment_ref: str, *, reason: str | None = None) -> m.Deployment:
        """Let the deployment's runs go on."""
        return await self._send(calls.pause_deployment(deployment_ref, reason, pause=False))


class Runs(_Resource):
    """Runs: start, read, list, control and audit them."""

    async def start(
        self,
        deployment_ref: str,
        input: Json | None = None,  # noqa: A002 - the API's name
        *,
        idempotency_key: str | None = None,
        thread_id: str | None = None,
        priority: int | None = None,
        wait_seconds: int | None = None,
    ) -> m.RunStatusResponse:
        """Start a run; every try sends one idempotency key, so one run starts however many.

        ``wait_seconds`` asks the server to answer once the run waits or ends (``Prefer: wait``).
        """
        call = calls.start_run(
            deployment_ref,
            input,
            idempotency_key=idempotency_key,
            thread_id=thread_id,
            priority=priority,
            wait_seconds=wait_seconds,
        )
        return await self._send(call)

    async def get(self, run_id: str) -> m.RunStatusResponse:
        """One run."""
        return await self._send(calls.get_run(run_id))

    def list(self, *, page_size: int | None = None) -> AsyncIterator[m.RunStatusResponse]:
        """Every run of the tenant, newest first, page after page (``GET /admin/runs``)."""
        return self._all(calls.list_runs(page_size))

    async def cancel(self, run_id: str, reason: str) -> m.RunStatusResponse:
        """Cancel a run that has not ended."""
        return await self._send(calls.run_control(run_id, "cancel", {"reason": reason}))

    async def pause(self, run_id: str, *, reason: str | None = None) -> m.RunStatusResponse:
        """Hold a run where it is."""
        body = {} if reason is None else {"reason": reason}
        return await self._send(calls.run_control(run_id, "pause", body))

    async def unpause(self, run_id: str, *, reason: str | None = None) -> m.RunStatusResponse:
        """Let a paused run go on."""
        body = {} if reason is None else {"reason": reason}
        return await self._send(calls.run_control(run_id, "unpause", body))

    async def resume(self, run_id: str, value: object) -> m.RunStatusResponse:
        """Answer a run waiting at an interrupt node with ``value``."""
        return await self._send(calls.run_control(run_id, "resume", {"value": value}))

    async def timeline(self, run_id: str) -> m.AuditTimelineResponse:
        """The run's audit records in order."""
        return await self._send(calls.run_timeline(run_id))

    async def verify(self, run_id: str) -> m.AuditVerificationResponse:
        """The server's verification of the run's audit chain and signature."""
        return await self._send(calls.verify_run(run_id))

    async def bundle(self, run_id: str) -> m.AuditBundle:
        """The run's audit bundle: its records, signature and log proofs."""
        return await self._send(calls.run_bundle(run_id))


class Approvals(_Resource):
    """Approvals: the inbox, and decisions on them."""

    def list(
        self,
        *,
        status: str | None = None,
        deployment_ref: str | None = None,
        run_id: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[m.ApprovalRecord]:
        """Every approval that matches, oldest first, page after page."""
        return self._all(calls.list_approvals(status, deployment_ref, run_id, page_size))

    async def get(self, approval_id: str) -> m.ApprovalRecord:
        """One approval."""
        return await self._send(calls.get_approval(approval_id))

    async def resolve(
        self,
        approval: m.ApprovalRecord,
        decision: str,
        *,
        reason: str | None = None,
        edited_payload: Json | None = None,
    ) -> m.ApprovalResolutionResponse:
        """Decide ``approval`` as read (refused, 409 ``approval_changed``, if it changed since)."""
        call = calls.resolve_approval(approval, decision, reason, edited_payload)
        return await self._send(call)


class Tasks(_Resource):
    """External tasks: what workers claim, heartbeat, complete and fail."""

    async def claim(
        self,
        worker_id: str,
        topics: Sequence[str],
        *,
        max_tasks: int = 1,
        wait_seconds: int = 20,
        lock_seconds: int | None = None,
    ) -> list[m.ClaimedTask]:
        """Claim up to ``max_tasks`` of ``topics``, waiting up to ``wait_seconds`` for one."""
        call = calls.claim_tasks(worker_id, topics, max_tasks, wait_seconds, lock_seconds)
        return await self._send(call)

    async def get(self, task_id: str) -> m.TaskSummary:
        """One task."""
        return await self._send(calls.get_task(task_id))

    def list(
        self, *, status: str | None = None, topic: str | None = None, page_size: int | None = None
    ) -> AsyncIterator[m.TaskSummary]:
        """Every task that matches, page after page."""
        return self._all(calls.list_tasks(status, topic, page_size))

    async def complete(
        self, task: m.ClaimedTask, output: Json, *, claim_next: Json | None = None
    ) -> m.TaskCompletion:
        """Complete a claimed task with ``output`` (a JSON object).

        ``claim_next`` (``{"worker_id", "topics", "max_tasks"?, "lock_seconds"?}``) claims the
        worker's next tasks in the same request, without waiting: they are in ``next_tasks``.
        """
        call = calls.complete_task(task.task_id, task.lock_token, output, claim_next)
        return await self._send(call)

    async def fail(
        self, task: m.ClaimedTask, error: str, *, retry_after_seconds: int | None = None
    ) -> m.TaskSummary:
        """Fail a claimed task's attempt, saying why."""
        body: dict[str, object] = {"lock_token": task.lock_token, "error": error}
        if retry_after_seconds is not None:
            body["retry_after_seconds"] = retry_after_seconds
        return await self._send(calls.fail_task(task.task_id, body))

    async def heartbeat(
        self, task: m.ClaimedTask, *, lock_seconds: int | None = None
    ) -> m.TaskLockResponse:
        """Extend a claimed task's lock."""
        call = calls.heartbeat_task(task.task_id, task.lock_token, lock_seconds)
        return await self._send(call)


class Subscriptions(_Resource):
    """Webhook subscriptions (``client.webhooks``)."""

    async def create(
        self,
        deployment_ref: str,
        target_url: str,
        event_types: Sequence[str],
        *,
        secret: str | None = None,
    ) -> m.SubscriptionCreated:
        """Subscribe ``target_url``; the answer holds the secret, shown this once."""
        call = calls.create_subscription(deployment_ref, target_url, event_types, secret)
        return await self._send(call)

    def list(self) -> AsyncIterator[m.SubscriptionView]:
        """Every subscription of the tenant."""
        return self._all(calls.list_subscriptions())

    async def delete(self, subscription_id: str) -> None:
        """Remove a subscription."""
        await self._send(calls.delete_subscription(subscription_id))

    async def rotate_secret(self, subscription_id: str) -> m.SecretRotated:
        """A new secret (shown once); the old one signs beside it for a day."""
        return await self._send(calls.rotate_secret(subscription_id))

    async def send_test_event(self, subscription_id: str) -> m.Delivery:
        """Queue a ``webhook.test`` delivery to the subscription."""
        return await self._send(calls.send_test_event(subscription_id))


class Evidence(_Resource):
    """Economic evidence: batches of events, stored once by their ``event_id``."""

    async def executions(self, events: Sequence[Json]) -> m.IngestResult:
        """Store execution events (what each step cost)."""
        return await self._send(calls.ingest_evidence("executions", events))

    async def outcomes(self, events: Sequence[Json]) -> m.IngestResult:
        """Store outcome events (what each run achieved)."""
        return await self._send(calls.ingest_evidence("outcomes", events))

    async def charge_revisions(self, events: Sequence[Json]) -> m.IngestResult:
        """Store revisions of charges already reported."""
        return await self._send(calls.ingest_evidence("charge-revisions", events))

    async def source_inventories(self, events: Sequence[Json]) -> m.IngestResult:
        """Store source inventories (what a source window should hold)."""
        return await self._send(calls.ingest_evidence("source-inventories", events))


class Decisions(_Resource):
    """Version decisions."""

    def list(
        self, *, workflow_id: str | None = None, page_size: int | None = None
    ) -> AsyncIterator[m.DecisionArtifact]:
        """Every decision that matches, page after page."""
        return self._all(calls.list_decisions(workflow_id, page_size))
