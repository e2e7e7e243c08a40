"""The inbox and the approval page: what a person may resolve, and resolving it (ADR 0080).

The inbox lists the pending approvals the approval rules admit the person to, the soonest SLA
first (``ApprovalService.inbox``), one keyset page per request read in one statement. The
approval page shows what is decided and who acted; its forms (approve, reject, edit-then-approve
with a diff to confirm) carry the ``action_digest`` shown, so a form that went stale resolves
nothing. Roles are the API's: reading needs ``approval_read``, resolving
``approval_resolve``; who may not resolve sees no forms, and a forged post is 403.
"""

from datetime import UTC, datetime
from typing import Any

from starlette.responses import Response

from ecp_core.errors import (
    ApprovalChanged,
    FieldError,
    MalformedRequest,
    NotFound,
    ValidationFailed,
)
from ecp_core.json_text import parse_json_text
from ecp_core.permissions import Permission
from ecp_core.runs.approvals.model import ApprovalRecord, ApprovalResolutionRequest
from ecp_core.types import ApprovalDecision, ApprovalStatus
from ecp_core.wire import structure
from ecp_http.server.console.browser import Visit, redirect, signed_in
from ecp_http.server.console.drawing import draw_graph, drawable
from ecp_http.server.console.views import (
    INBOX_PAGE,
    actions_rows,
    approval_row,
    graph_rows,
    json_diff,
    pretty_json,
    timeline_rows,
)
from ecp_http.wire.models import ConsoleInboxQuery


def _inbox(visit: Visit) -> Response:
    """Pending approvals this person may resolve, soonest SLA first; a deployment filter."""
    actor = visit.actor(Permission.APPROVAL_READ)
    query: ConsoleInboxQuery = visit.call.params or ConsoleInboxQuery()
    deployment = query.deployment or None
    resolver = visit.may(Permission.APPROVAL_RESOLVE)
    found: list[ApprovalRecord] = []
    cursor = None
    if resolver:
        found, cursor = visit.services.ecp.approvals.inbox(
            actor, limit=INBOX_PAGE, cursor=query.cursor or None, deployment_ref=deployment
        )
    now = datetime.now(UTC)
    return visit.page(
        "console_inbox.html",
        section="inbox",
        resolver=resolver,
        deployment=deployment or "",
        rows=[approval_row(approval, actor, now) for approval in found],
        next_cursor=cursor,
        first_page=query.cursor is not None,
    )


def _edit_of(approval: ApprovalRecord) -> dict[str, Any] | None:
    """The payload as edited by the approvals so far (the first fixes it, ADR 0075), or None."""
    given = approval.approvals or ((approval.resolution,) if approval.resolution else ())
    return next((g.edited_payload for g in given if g.edited_payload is not None), None)


def _approval_context(visit: Visit, approval: ApprovalRecord) -> dict[str, Any]:
    """What the approval page shows of ``approval``, and which forms it offers."""
    actor = visit.session.actor()
    resolver = visit.may(Permission.APPROVAL_RESOLVE)
    may_decide = (
        resolver
        and approval.status is ApprovalStatus.PENDING
        and approval.admits(actor)
        and not approval.approved_by(actor.subject)
    )
    services, tenant = visit.services, visit.session.tenant_id
    waiting_at = approval.node_id if approval.status is ApprovalStatus.PENDING else None
    try:
        timeline = services.ecp.audit.timeline(tenant, approval.run_id).entries
        definition = services.ecp.graphs.definition(tenant, approval.graph_version_ref)
        graph = graph_rows(definition, timeline, waiting_at)
        drawn = draw_graph(definition, graph, key="run-graph") if drawable(definition) else None
    except NotFound:  # the run was purged (retention): the approval is shown on its own
        timeline, graph, drawn = (), [], None
    edited = _edit_of(approval)
    return {
        "section": "inbox",
        "approval": approval_row(approval, actor, datetime.now(UTC)),
        "payload": pretty_json(approval.proposed_payload),
        "approved_payload": "" if edited is None else pretty_json(edited),
        "context_excerpt": pretty_json(approval.context_excerpt)
        if approval.context_excerpt
        else "",
        "actions": actions_rows(services.ecp.approvals.actions(tenant, approval.approval_id)),
        "timeline": timeline_rows(timeline),
        "graph": graph,
        "drawn": drawn,
        "may_decide": may_decide,
        "reader_only": not resolver,
        "allowed": {decision.value for decision in approval.allowed_actions},
        "action_digest": approval.action_digest,
        "csrf_resolve": visit.csrf(f"resolve:{approval.approval_id}"),
        "csrf_edit": visit.csrf(f"edit:{approval.approval_id}"),
    }


def _approval(visit: Visit) -> Response:
    """One approval: what is decided, who acted, the run's timeline, and the decision forms."""
    visit.actor(Permission.APPROVAL_READ)
    approval_id = visit.call.path["approval_id"]
    approval = visit.services.ecp.approvals.get(visit.session.tenant_id, approval_id)
    return visit.page("console_approval.html", **_approval_context(visit, approval))


def _edited(visit: Visit) -> dict[str, Any]:
    """The edited payload of a form: a JSON object, or ValidationFailed saying where it is not."""
    text = visit.call.form.get("edited_payload", "")
    try:
        value = parse_json_text(text)
    except (MalformedRequest, ValidationFailed) as exc:
        msg = f"not valid JSON: {exc}"
        raise ValidationFailed(
            "the edited payload is not valid JSON",
            errors=[FieldError(loc=("edited_payload",), msg=msg)],
        ) from exc
    if not isinstance(value, dict):
        msg = "must be a JSON object"
        raise ValidationFailed(
            "the edited payload must be a JSON object",
            errors=[FieldError(loc=("edited_payload",), msg=msg)],
        )
    return value


def _review_edit(visit: Visit) -> Response:
    """The diff between the proposed payload and the edit, to confirm before anything resolves."""
    approval_id = visit.call.path["approval_id"]
    visit.check_form(f"edit:{approval_id}")
    visit.actor(Permission.APPROVAL_RESOLVE)
    approval = visit.services.ecp.approvals.get(visit.session.tenant_id, approval_id)
    context = _approval_context(visit, approval)
    text = visit.call.form.get("edited_payload", "")
    shown = visit.call.form.get("action_digest", "")
    common = {"form_digest": shown, "stale": shown != approval.action_digest, **context}
    try:
        edited = _edited(visit)
    except ValidationFailed as exc:
        problems = "; ".join(error.msg for error in exc.errors) or str(exc)
        return visit.page(
            "console_edit.html", status=422, edit_text=text, error=problems, diff=[], **common
        )
    return visit.page(
        "console_edit.html",
        edit_text=pretty_json(edited),
        error=None,
        diff=json_diff(approval.proposed_payload, edited),
        reason=visit.call.form.get("reason", ""),
        **common,
    )


def _resolve(visit: Visit) -> Response:
    """Resolve with the form's decision, refused when the approval changed since it was shown."""
    approval_id = visit.call.path["approval_id"]
    visit.check_form(f"resolve:{approval_id}")
    actor = visit.actor(Permission.APPROVAL_RESOLVE)
    form = visit.call.form
    editing = form.get("decision") == ApprovalDecision.EDIT_AND_APPROVE.value
    if form.get("decision") == ApprovalDecision.REJECT.value and not form.get("reason", "").strip():
        msg = "say why: a rejection from the console carries a comment"
        raise ValidationFailed(
            "the rejection has no comment", errors=[FieldError(loc=("reason",), msg=msg)]
        )
    request = structure(
        {
            "decision": form.get("decision", ""),
            "edited_payload": _edited(visit) if editing else None,
            "reason": form.get("reason", "").strip() or None,
            "action_digest": form.get("action_digest", ""),  # required of a console form
        },
        ApprovalResolutionRequest,
        what="the decision form",
    )
    approval = visit.services.ecp.approvals.get(actor.tenant_id, approval_id)
    try:
        visit.services.ecp.resolve(actor, approval.deployment_ref, approval_id, request)
    except ApprovalChanged:
        fresh = visit.services.ecp.approvals.get(actor.tenant_id, approval_id)
        return visit.page(
            "console_approval.html",
            status=409,
            stale=True,
            **_approval_context(visit, fresh),
        )
    return redirect(f"/console/approvals/{approval_id}")


inbox = signed_in(_inbox)
approval_page = signed_in(_approval)
review_edit = signed_in(_review_edit)
resolve = signed_in(_resolve)

__all__ = ["approval_page", "inbox", "resolve", "review_edit"]
