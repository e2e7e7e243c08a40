"""Every API call the resources make, built once for ``Client`` and ``AsyncClient`` alike.

Each function returns a :class:`~ecp_client._core.Call`; a listing returns a call of one
:class:`~ecp_client._core.Page`, which the clients follow from cursor to cursor.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from ecp_client import models as m
from ecp_client._core import Call, Page, model, nothing, page, quoted

Json = Mapping[str, Any]
Query = dict[str, str | int]


def _query(**values: str | int | None) -> Query:
    return {name: value for name, value in values.items() if value is not None}


def _body(**values: object) -> dict[str, object]:
    return {name: value for name, value in values.items() if value is not None}


# Graphs and deployments


def register_graph(definition: Json) -> Call[m.GraphRegistration]:
    """``POST /v1/graphs``: a graph definition, registered as its next version."""
    return Call(method="POST", path="/v1/graphs", body=definition, read=model(m.GraphRegistration))


def get_graph(graph_id: str, version: int | None) -> Call[m.GraphVersion]:
    """``GET /v1/graphs/{graph_id}``: the latest version, or ``version``."""
    path = quoted("/v1/graphs/{}", graph_id)
    return Call(method="GET", path=path, params=_query(version=version), read=model(m.GraphVersion))


def list_graphs(limit: int | None) -> Call[Page[m.GraphVersion]]:
    """``GET /v1/graphs``: one page of the tenant's graphs."""
    read = page(m.GraphListResponse, lambda body: body.graphs)
    return Call(method="GET", path="/v1/graphs", params=_query(limit=limit), read=read)


def create_deployment(
    deployment_ref: str,
    graph_id: str,
    graph_version: int | None,
    max_concurrent_runs: int | None,
) -> Call[m.Deployment]:
    """``POST /v1/deployments``: name a graph version (the latest when not given)."""
    body = _body(
        deployment_ref=deployment_ref,
        graph_id=graph_id,
        graph_version=graph_version,
        max_concurrent_runs=max_concurrent_runs,
    )
    return Call(method="POST", path="/v1/deployments", body=body, read=model(m.Deployment))


def get_deployment(ref: str) -> Call[m.Deployment]:
    """``GET /v1/deployments/{ref}``."""
    return Call(method="GET", path=quoted("/v1/deployments/{}", ref), read=model(m.Deployment))


def list_deployments(limit: int | None) -> Call[Page[m.Deployment]]:
    """``GET /v1/deployments``: one page of the tenant's deployments."""
    read = page(m.DeploymentListResponse, lambda body: body.deployments)
    return Call(method="GET", path="/v1/deployments", params=_query(limit=limit), read=read)


def pause_deployment(ref: str, reason: str | None, *, pause: bool) -> Call[m.Deployment]:
    """``POST /v1/deployments/{ref}/pause`` (or ``unpause``)."""
    path = quoted("/v1/deployments/{}/" + ("pause" if pause else "unpause"), ref)
    body = _body(reason=reason)
    return Call(method="POST", path=path, body=body, read=model(m.Deployment))


# Runs


def start_run(
    deployment_ref: str,
    run_input: Json | None,
    *,
    idempotency_key: str | None,
    thread_id: str | None,
    priority: int | None,
    wait_seconds: int | None,
) -> Call[m.RunStatusResponse]:
    """``POST /runs``; every try carries the one idempotency key, so only one run starts."""
    body = _body(
        deployment_ref=deployment_ref, input=run_input, thread_id=thread_id, priority=priority
    )
    timeout = None if wait_seconds is None else wait_seconds + 30.0
    prefer = {} if wait_seconds is None else {"Prefer": f"wait={wait_seconds}"}
    return Call(
        method="POST",
        path="/runs",
        body=body,
        read=model(m.RunStatusResponse),
        idempotency_key=idempotency_key,
        idempotent=True,
        timeout=timeout,
        extra_headers=prefer,
    )


def get_run(run_id: str) -> Call[m.RunStatusResponse]:
    """``GET /runs/{run_id}``."""
    return Call(method="GET", path=quoted("/runs/{}", run_id), read=model(m.RunStatusResponse))


def list_runs(limit: int | None) -> Call[Page[m.RunStatusResponse]]:
    """``GET /admin/runs``: one page of the tenant's runs, newest first."""
    read = page(m.AdminRunListResponse, lambda body: body.runs)
    return Call(method="GET", path="/admin/runs", params=_query(limit=limit), read=read)


def run_control(run_id: str, verb: str, body: Json) -> Call[m.RunStatusResponse]:
    """``POST /runs/{run_id}/{verb}``: cancel, pause, unpause or resume."""
    path = quoted("/runs/{}/" + verb, run_id)
    return Call(method="POST", path=path, body=body, read=model(m.RunStatusResponse))


def run_timeline(run_id: str) -> Call[m.AuditTimelineResponse]:
    """``GET /runs/{run_id}/timeline``: the run's audit records in order."""
    path = quoted("/runs/{}/timeline", run_id)
    return Call(method="GET", path=path, read=model(m.AuditTimelineResponse))


def verify_run(run_id: str) -> Call[m.AuditVerificationResponse]:
    """``GET /runs/{run_id}/audit/verify``: the server's check of the run's audit chain."""
    path = quoted("/runs/{}/audit/verify", run_id)
    return Call(method="GET", path=path, read=model(m.AuditVerificationResponse))


def run_bundle(run_id: str) -> Call[m.AuditBundle]:
    """``GET /runs/{run_id}/audit/bundle``: the run's records with proofs, to verify offline."""
    path = quoted("/runs/{}/audit/bundle", run_id)
    return Call(method="GET", path=path, read=model(m.AuditBundle))


# Approvals


def list_approvals(
    status: str | None, deployment_ref: str | None, run_id: str | None, limit: int | None
) -> Call[Page[m.ApprovalRecord]]:
    """``GET /v1/approvals``: one page of the tenant's approvals, oldest first."""
    params = _query(status=status, deployment_ref=deployment_ref, run_id=run_id, limit=limit)
    read = page(m.ApprovalPageResponse, lambda body: body.approvals)
    return Call(method="GET", path="/v1/approvals", params=params, read=read)


def get_approval(approval_id: str) -> Call[m.ApprovalRecord]:
    """``GET /v1/approvals/{approval_id}``."""
    path = quoted("/v1/approvals/{}", approval_id)
    return Call(method="GET", path=path, read=model(m.ApprovalRecord))


def resolve_approval(
    approval: m.ApprovalRecord,
    decision: str,
    reason: str | None,
    edited_payload: Json | None,
) -> Call[m.ApprovalResolutionResponse]:
    """``POST /deployments/{ref}/approvals/{id}/resolve``, refused if the approval changed."""
    path = quoted(
        "/deployments/{}/approvals/{}/resolve", approval.deployment_ref, approval.approval_id
    )
    body = _body(
        decision=decision,
        reason=reason,
        edited_payload=edited_payload,
        action_digest=approval.action_digest or None,
    )
    return Call(method="POST", path=path, body=body, read=model(m.ApprovalResolutionResponse))


# Tasks


def claim_tasks(
    worker_id: str,
    topics: Sequence[str],
    max_tasks: int,
    wait_seconds: int,
    lock_seconds: int | None,
) -> Call[list[m.ClaimedTask]]:
    """``POST /v1/tasks/claim``: a long poll of up to ``wait_seconds``."""
    body = _body(
        worker_id=worker_id,
        topics=list(topics),
        max_tasks=max_tasks,
        wait_seconds=wait_seconds,
        lock_seconds=lock_seconds,
    )

    def read(answer: Any) -> list[m.ClaimedTask]:  # noqa: ANN401 - an Answer
        return model(m.TaskClaimResponse)(answer).tasks

    timeout = wait_seconds + 30.0
    return Call(method="POST", path="/v1/tasks/claim", body=body, read=read, timeout=timeout)


def get_task(task_id: str) -> Call[m.TaskSummary]:
    """``GET /v1/tasks/{task_id}``."""
    return Call(method="GET", path=quoted("/v1/tasks/{}", task_id), read=model(m.TaskSummary))


def list_tasks(
    status: str | None, topic: str | None, limit: int | None
) -> Call[Page[m.TaskSummary]]:
    """``GET /v1/tasks``: one page of the tenant's tasks."""
    read = page(m.TaskListResponse, lambda body: body.tasks)
    params = _query(status=status, topic=topic, limit=limit)
    return Call(method="GET", path="/v1/tasks", params=params, read=read)


def complete_task(
    task_id: str, lock_token: str, output: Json, claim_next: Json | None
) -> Call[m.TaskCompletion]:
    """``POST /v1/tasks/{task_id}/complete``, with the claim's lock token (and the next claim)."""
    path = quoted("/v1/tasks/{}/complete", task_id)
    body = _body(lock_token=lock_token, output=output, claim_next=claim_next)
    return Call(method="POST", path=path, body=body, read=model(m.TaskCompletion))


def fail_task(task_id: str, body: Json) -> Call[m.TaskSummary]:
    """``POST /v1/tasks/{task_id}/fail``, with the claim's lock token."""
    path = quoted("/v1/tasks/{}/fail", task_id)
    return Call(method="POST", path=path, body=body, read=model(m.TaskSummary))


def heartbeat_task(
    task_id: str, lock_token: str, lock_seconds: int | None
) -> Call[m.TaskLockResponse]:
    """``POST /v1/tasks/{task_id}/heartbeat``: extend the claim's lock."""
    path = quoted("/v1/tasks/{}/heartbeat", task_id)
    body = _body(lock_token=lock_token, lock_seconds=lock_seconds)
    return Call(method="POST", path=path, body=body, read=model(m.TaskLockResponse))


# Webhook subscriptions


def create_subscription(
    deployment_ref: str, target_url: str, event_types: Sequence[str], secret: str | None
) -> Call[m.SubscriptionCreated]:
    """``POST /webhooks/subscriptions``: the answer shows the secret this once."""
    body = _body(
        deployment_ref=deployment_ref,
        target_url=target_url,
        event_types=list(event_types),
        secret=secret,
    )
    path = "/webhooks/subscriptions"
    return Call(method="POST", path=path, body=body, read=model(m.SubscriptionCreated))


def list_subscriptions() -> Call[Page[m.SubscriptionView]]:
    """``GET /webhooks/subscriptions``: the tenant's subscriptions (one page)."""
    read = page(m.SubscriptionListResponse, lambda body: body.subscriptions)
    return Call(method="GET", path="/webhooks/subscriptions", read=read)


def delete_subscription(subscription_id: str) -> Call[None]:
    """``DELETE /webhooks/subscriptions/{id}``."""
    path = quoted("/webhooks/subscriptions/{}", subscription_id)
    return Call(method="DELETE", path=path, read=nothing)


def rotate_secret(subscription_id: str) -> Call[m.SecretRotated]:
    """``POST /webhooks/subscriptions/{id}/rotate-secret``: the new secret, shown once."""
    path = quoted("/webhooks/subscriptions/{}/rotate-secret", subscription_id)
    return Call(method="POST", path=path, read=model(m.SecretRotated))


def send_test_event(subscription_id: str) -> Call[m.Delivery]:
    """``POST /webhooks/subscriptions/{id}/test``: a ``webhook.test`` delivery."""
    path = quoted("/webhooks/subscriptions/{}/test", subscription_id)
    return Call(method="POST", path=path, read=model(m.Delivery))


# Evidence


def ingest_evidence(kind: str, events: Sequence[Json]) -> Call[m.IngestResult]:
    """``POST /v1/evidence/{kind}``: a batch; an exact replay of a stored event changes nothing."""
    path = quoted("/v1/evidence/{}", kind)
    body = {"events": list(events)}
    return Call(method="POST", path=path, body=body, read=model(m.IngestResult), idempotent=True)


# Decisions


def list_decisions(workflow_id: str | None, limit: int | None) -> Call[Page[m.DecisionArtifact]]:
    """``GET /v1/decisions``: one page of version decisions."""
    read = page(m.DecisionListResponse, lambda body: body.decisions)
    params = _query(workflow_id=workflow_id, limit=limit)
    return Call(method="GET", path="/v1/decisions", params=params, read=read)
