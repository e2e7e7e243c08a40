"""How the console shows things: rows for its tables, readable JSON, a diff, time left.

Pure functions of the records they are given: no reads, so a page's statements are its
handler's alone. Nothing here shows an audit record's snapshots: the timeline is who, what and
when, so that no erased or secret value reaches a page.
"""

import difflib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.types import ApprovalStatus, AttemptStatus

INBOX_PAGE = 25
"""Approvals per inbox page."""


def duration(span: timedelta) -> str:
    """``span`` in words a person reads at a glance: ``2 d 3 h``, ``1 h 5 min``, ``45 s``."""
    seconds = int(abs(span.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min"
    return f"{seconds} s"


def sla_text(deadline: datetime | None, now: datetime) -> tuple[str, str]:
    """What the SLA says now and how urgent that is (``none``, ``ok``, ``soon``, ``overdue``)."""
    if deadline is None:
        return "no SLA", "none"
    left = deadline - now
    if left.total_seconds() <= 0:
        return f"overdue by {duration(left)}", "overdue"
    return f"due in {duration(left)}", "soon" if left <= timedelta(hours=1) else "ok"


def when(moment: datetime) -> str:
    """A timestamp as the console prints it (UTC, to the second)."""
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def approval_row(approval: ApprovalRecord, actor: ActorIdentity, now: datetime) -> dict[str, Any]:
    """What the inbox and the approval page show of ``approval`` for ``actor``."""
    pending = approval.status is ApprovalStatus.PENDING
    sla, urgency = sla_text(approval.sla_deadline, now) if pending else ("closed", "none")
    return {
        "approval_id": approval.approval_id,
        "run_id": approval.run_id,
        "node_id": approval.node_id,
        "deployment_ref": approval.deployment_ref,
        "graph_version_ref": approval.graph_version_ref,
        "summary": approval.summary,
        "rationale": approval.rationale,
        "status": approval.status.value,
        "pending": pending,
        "created_at": when(approval.created_at),
        "sla": sla,
        "urgency": urgency,
        "sla_deadline": when(approval.sla_deadline) if approval.sla_deadline else None,
        "escalated": approval.escalated_from_id is not None,
        "escalated_from_id": approval.escalated_from_id,
        "replaced": approval.status is ApprovalStatus.ESCALATED,
        "approvals_given": len(approval.approvals),
        "min_approvals": approval.min_approvals,
        "approved_by_me": approval.approved_by(actor.subject),
        "resolution": None
        if approval.resolution is None
        else {
            "decision": approval.resolution.decision.value.replace("_", " "),
            "subject": approval.resolution.actor.subject,
            "at": when(approval.resolution.resolved_at),
            "reason": approval.resolution.reason,
        },
    }


def pretty_json(value: Any) -> str:  # noqa: ANN401 - JSON is dynamically typed
    """``value`` as indented JSON with sorted keys (``null`` when there is none)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def json_diff(before: Any, after: Any) -> list[dict[str, str]]:  # noqa: ANN401
    """The lines of a unified diff of the two values as :func:`pretty_json`, each with its kind.

    Kinds: ``add``, ``del``, ``same`` and ``hunk`` (the ``@@`` lines). An unchanged payload has
    no lines.
    """
    old, new = pretty_json(before).splitlines(), pretty_json(after).splitlines()
    lines = []
    for line in difflib.unified_diff(old, new, "proposed", "edited", n=3, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        lines.append({"kind": kind, "text": line})
    return lines


def actions_rows(actions: Iterable[ApprovalActionRecord]) -> list[dict[str, str]]:
    """Who acted on the approval so far, oldest first."""
    return [
        {
            "action": action.action.replace("_", " "),
            "subject": action.actor.subject if action.actor else "ECP",
            "at": when(action.occurred_at),
            "reason": str(action.metadata.get("reason") or ""),
        }
        for action in actions
    ]


def timeline_rows(entries: Iterable[NodeAuditRecord]) -> list[dict[str, str]]:
    """The run's timeline so far: node, attempt, status, when and who (no snapshots)."""
    rows = []
    for entry in entries:
        metadata = entry.execution_metadata if isinstance(entry.execution_metadata, dict) else {}
        actor = metadata.get("actor")
        subject = actor.get("subject") if isinstance(actor, dict) else None
        rows.append(
            {
                "node_id": entry.node_id,
                "attempt": str(entry.attempt),
                "status": entry.status.value.replace("_", " "),
                "at": when(entry.created_at),
                "subject": str(subject) if subject else "",
            }
        )
    return rows


_DONE = frozenset({AttemptStatus.SUCCEEDED, AttemptStatus.APPROVED, AttemptStatus.RESUMED})
_FAILED = frozenset(
    {AttemptStatus.FAILED, AttemptStatus.REJECTED, AttemptStatus.DENIED, AttemptStatus.CANCELED}
)


def graph_rows(
    graph: GraphDefinition, entries: Iterable[NodeAuditRecord], waiting_at: str | None
) -> list[dict[str, Any]]:
    """The graph's nodes from its entry, breadth first, each with where the run stands there.

    ``state``: ``here`` (the approval's node while it waits), ``done`` (its last record says it
    passed), ``failed``, ``waiting`` (its last record is a wait), ``ahead`` (not reached);
    ``next`` names the nodes its edges lead to.
    """
    last: dict[str, AttemptStatus] = {}
    for entry in entries:
        last[entry.node_id] = entry.status
    targets: dict[str, list[str]] = {}
    for edge in graph.edges:
        targets.setdefault(edge.source, []).append(edge.target)
    kinds = {node.id: node.kind.value for node in graph.nodes}
    order, seen = [], {graph.entry}
    queue = [graph.entry]
    while queue:
        node_id = queue.pop(0)
        order.append(node_id)
        for target in targets.get(node_id, []):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    order += [node.id for node in graph.nodes if node.id not in seen]  # unreachable ones last

    def state(node_id: str) -> str:
        if node_id == waiting_at:
            return "here"
        status = last.get(node_id)
        if status is None:
            return "ahead"
        if status in _DONE:
            return "done"
        return "failed" if status in _FAILED else "waiting"

    return [
        {
            "node_id": node_id,
            "kind": kinds.get(node_id, "?").replace("_", " "),
            "state": state(node_id),
            "next": targets.get(node_id, []),
        }
        for node_id in order
    ]


__all__ = [
    "INBOX_PAGE",
    "actions_rows",
    "approval_row",
    "duration",
    "graph_rows",
    "json_diff",
    "pretty_json",
    "sla_text",
    "timeline_rows",
    "when",
]
