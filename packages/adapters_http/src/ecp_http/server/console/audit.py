"""The audit page: verify a deployment's or a run's audit chains from the browser (ADR 0085).

``/console/audit`` (``audit_read``, as the API's audit routes) lists the tenant's deployments
(when the role may also read them, ``graph_read``, as ``GET /v1/deployments``), each with a
Verify form, and a form for one run's id. Verifying calls what ``GET
/deployments/{ref}/audits/verify`` and ``GET /runs/{run_id}/audit/verify`` call and shows their
answer: digests verified, signatures verified, the signing key id, how many records, and the
first that failed. Beside it, the tenant's transparency log: its newest signed checkpoint and the
key that verifies it, to keep and compare later (ADR 0086).
"""

import base64
from typing import Any

from starlette.responses import Response

from ecp_core.audit.record import AuditVerificationResponse
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.notes import parse_note
from ecp_http.server.console.browser import Visit, signed_in
from ecp_http.server.console.views import when
from ecp_http.wire.models import ConsoleAuditQuery

DEPLOYMENTS_PAGE = 25
"""Deployments an audit page lists."""
VERIFY_FORM = "audit-verify"
"""The CSRF name of every Verify form of the page (they all verify, and change nothing)."""


def result_view(found: AuditVerificationResponse) -> dict[str, Any]:
    """A verification's answer as the page shows it."""
    kind, _, name = found.scope.partition(":")
    signatures = {True: "verified", False: "FAILED", None: "no signed records"}[
        found.signature_verified
    ]
    ok = found.verified and found.signature_verified is not False
    return {
        "kind": kind,
        "name": name,
        "ok": ok,
        "verified": found.verified,
        "signatures": signatures,
        "signature_failed": found.signature_verified is False,
        "key_id": found.signing_key_id,
        "records": found.record_count,
        "unsigned": found.unsigned_record_count,
        "failed_audit_id": found.failed_audit_id,
        "error": found.error,
    }


def _page(visit: Visit, result: AuditVerificationResponse | None) -> Response:
    """The audit page, with the answer of a verification when one was asked for."""
    query: ConsoleAuditQuery = visit.call.params or ConsoleAuditQuery()
    lists = visit.may(Permission.GRAPH_READ)
    deployments: list[dict[str, Any]] = []
    cursor = None
    if lists:
        found, cursor = visit.services.ecp.graphs.deployments_page(
            visit.session.tenant_id, limit=DEPLOYMENTS_PAGE, cursor=query.cursor or None
        )
        deployments = [
            {
                "ref": deployment.deployment_ref,
                "graph": f"{deployment.graph_id} v{deployment.graph_version}",
                "created_at": when(deployment.created_at),
            }
            for deployment in found
        ]
    return visit.page(
        "console_audit.html",
        section="audit",
        lists=lists,
        deployments=deployments,
        next_cursor=cursor,
        paged=bool(query.cursor),
        keys=[key.key_id for key in visit.services.ecp.audit.signing_keys()],
        log=_log_head(visit),
        result=None if result is None else result_view(result),
        csrf_verify=visit.csrf(VERIFY_FORM),
    )


def _log_head(visit: Visit) -> dict[str, object] | None:
    """The tenant's newest signed checkpoint and the key that verifies it, or None (no log)."""
    log = visit.services.ecp.transparency
    if log is None or not visit.may(Permission.LOG_READ):
        return None
    note = log.checkpoint(visit.session.tenant_id)
    head = Checkpoint.parse(parse_note(note).text)
    return {
        "origin": head.origin,
        "size": head.size,
        "root": base64.b64encode(head.root).decode("ascii"),
        "note": note,
        "vkey": log.public_keys(visit.session.tenant_id)[0].vkey(),
    }


def _audit(visit: Visit) -> Response:
    """The deployments to verify, a run id to verify, and the transparency log's state."""
    visit.actor(Permission.AUDIT_READ)
    return _page(visit, None)


def _verify(visit: Visit) -> Response:
    """Verify the form's deployment or run and show the answer on the audit page."""
    visit.check_form(VERIFY_FORM)
    actor = visit.actor(Permission.AUDIT_READ)
    deployment = visit.call.form.get("deployment", "").strip()
    run_id = visit.call.form.get("run_id", "").strip()
    if bool(deployment) == bool(run_id):
        raise ValidationFailed(
            "say what to verify: a deployment or a run id",
            errors=[FieldError(loc=("run_id",), msg="name one deployment or one run")],
        )
    audit = visit.services.ecp.audit
    if deployment:
        result = audit.verify_deployment(actor.tenant_id, deployment)
    else:
        result = audit.verify_run(actor.tenant_id, run_id)
    return _page(visit, result)


audit_page = signed_in(_audit)
verify = signed_in(_verify)

__all__ = ["DEPLOYMENTS_PAGE", "VERIFY_FORM", "audit_page", "result_view", "verify"]
