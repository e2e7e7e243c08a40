"""How the console shows runs: the list's filters read from a form, a run's row, its facts.

Pure functions of what they are given (no reads). A run shows what the API's run read shows
(``RunStatusResponse``): never its checkpoint state, and an erased run's output is marked erased.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.runs.run.model import FAILURE_REASONS, Run
from ecp_core.runs.run.search import RunFilter
from ecp_core.runs.tasks.model import Task, TaskStatus
from ecp_core.types import RunPublicStatus
from ecp_http.server.console.views import pretty_json, when
from ecp_http.wire.models import ConsoleRunsQuery

RUNS_PAGE = 25
"""Runs per page of the run list."""

STATUSES = tuple(status.value for status in RunPublicStatus)
"""The public statuses, in the filter's order."""

_TONE = {
    RunPublicStatus.COMPLETED: "ok",
    RunPublicStatus.FAILED: "bad",
    RunPublicStatus.TERMINATED_BY_POLICY: "bad",
    RunPublicStatus.CANCELED: "off",
    RunPublicStatus.PAUSED: "warn",
    RunPublicStatus.PENDING: "off",
    RunPublicStatus.RUNNING: "live",
}
"""A status badge's tone (``wait`` for every waiting status)."""


def _moment(text: str, name: str, *, end: bool) -> datetime:
    """A UTC date (``YYYY-MM-DD``) or minute (``YYYY-MM-DDTHH:MM``) of the filter form.

    The end of a range is inclusive: the day or minute given is in it.
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is not None or moment.year < 1970:  # noqa: PLR2004
        msg = "a UTC date (YYYY-MM-DD) or date and time (YYYY-MM-DDTHH:MM)"
        raise ValidationFailed(f"{name} is not a date", errors=[FieldError(loc=(name,), msg=msg)])
    moment = moment.replace(tzinfo=UTC)
    if end:
        moment += timedelta(days=1) if len(text) <= len("YYYY-MM-DD") else timedelta(minutes=1)
    return moment


def run_filter(query: ConsoleRunsQuery) -> RunFilter:
    """The filters a run list's form gives (empty fields filter nothing); ValidationFailed else."""
    for name, value in filter_fields(query).items():
        if "\x00" in value:  # no store keeps one in a text, so no run could match
            msg = "must not contain a NUL character"
            raise ValidationFailed(f"{name} is not text", errors=[FieldError(loc=(name,), msg=msg)])
    status = None
    if query.status:
        if query.status not in STATUSES:
            msg = "one of " + ", ".join(STATUSES)
            raise ValidationFailed(
                "unknown run status", errors=[FieldError(loc=("status",), msg=msg)]
            )
        status = RunPublicStatus(query.status)
    return RunFilter(
        deployment_ref=(query.deployment or "").strip() or None,
        status=status,
        created_from=_moment(query.started_from, "started_from", end=False)
        if query.started_from
        else None,
        created_to=_moment(query.started_to, "started_to", end=True) if query.started_to else None,
        run_or_key=(query.find or "").strip() or None,
    )


def filter_fields(query: ConsoleRunsQuery) -> dict[str, str]:
    """The non-empty filter fields of ``query``, to keep them in the page links."""
    given = {
        "deployment": query.deployment,
        "status": query.status,
        "started_from": query.started_from,
        "started_to": query.started_to,
        "find": query.find,
    }
    return {name: value for name, value in given.items() if value}


_ENDED = frozenset(
    {
        RunPublicStatus.COMPLETED,
        RunPublicStatus.FAILED,
        RunPublicStatus.TERMINATED_BY_POLICY,
        RunPublicStatus.CANCELED,
    }
)
_WAITS = {
    RunPublicStatus.WAITING_APPROVAL: "approval",
    RunPublicStatus.WAITING_TASK: "a worker's task",
    RunPublicStatus.WAITING_CHILD: "a child run",
    RunPublicStatus.WAITING_INTERRUPT: "a resume value",
    RunPublicStatus.PENDING: "its turn (a slot)",
}


def waits_for(run: Run) -> str:
    """What the run waits for, in a few words; empty when it has ended."""
    status = run.public_status
    if status in _ENDED:
        return ""
    waiting = _WAITS.get(status, "")
    if status is RunPublicStatus.WAITING_APPROVAL and len(run.pending_approval_ids) > 1:
        waiting += f" ({len(run.pending_approval_ids)})"
    if status is RunPublicStatus.WAITING_TIMER:
        waiting = f"timer until {when(run.wait_until)}" if run.wait_until else "timer"
    if not run.paused_by:
        return waiting
    paused = "paused by its " + " and ".join(source.value for source in run.paused_by)
    return f"{waiting}, {paused}" if waiting else paused


def run_row(run: Run) -> dict[str, Any]:
    """What the run list and the run page's header show of ``run``."""
    status = run.public_status
    ended = status in _ENDED
    failure = run.failure_state
    return {
        "run_id": run.run_id,
        "status": status.value,
        "status_text": status.value.replace("_", " "),
        "tone": "wait" if status.value.startswith("waiting") else _TONE.get(status, "off"),
        "deployment_ref": run.deployment_ref,
        "graph_version_ref": run.graph_version_ref,
        "started": when(run.created_at),
        "updated": when(run.updated_at),
        "ended": ended,
        "waits_for": waits_for(run),
        "priority": run.priority,
        "paused_by": ", ".join(source.value for source in run.paused_by),
        "wait_until": when(run.wait_until) if run.wait_until else None,
        "started_by": run.started_by,
        "parent_run_id": run.parent_run_id,
        "idempotency_key": run.idempotency_key,
        "failure": None
        if failure is None
        else {
            "reason": failure.reason,
            "meaning": FAILURE_REASONS.get(failure.reason, ""),
            "node_id": failure.node_id,
            "message": failure.message,
        },
        "erased": run.erased_at is not None,
        "erased_at": when(run.erased_at) if run.erased_at else None,
    }


def task_row(task: Task) -> dict[str, Any]:
    """What the run page shows of one of its tasks: never its arguments, state or output."""
    return {
        "task_id": task.task_id,
        "node_id": task.node_id,
        "topic": task.topic,
        "status": task.status.value,
        "attempts": f"{task.attempt} of {task.max_attempts}",
        "worker_id": task.worker_id,
        "locked_until": when(task.locked_until) if task.locked_until else None,
        "updated": when(task.updated_at),
        "error": task.error if task.status is TaskStatus.FAILED else None,
    }


def run_payloads(run: Run) -> dict[str, Any]:
    """The run's payloads as the run read shows them: the one under review, and the output.

    Each is readable JSON, ``None`` when the run has none (yet), or marked erased once the run's
    data was erased.
    """
    erased = run.erased_at is not None
    review = None if run.paused is None else run.paused.input_payload
    return {
        "review": pretty_json(review) if review is not None else None,
        "output": pretty_json(run.output) if run.output is not None else None,
        "erased": erased,
        "output_erased": erased and run.output is None,
    }


__all__ = [
    "RUNS_PAGE",
    "STATUSES",
    "filter_fields",
    "run_filter",
    "run_payloads",
    "run_row",
    "task_row",
    "waits_for",
]
