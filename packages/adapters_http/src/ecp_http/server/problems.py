"""The one mapping from core error codes to RFC 9457 problem responses."""

import json
import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from ecp_core.errors import EcpError, NotFound, QuotaExhausted
from ecp_http.config.terms import in_server_terms
from ecp_http.logs import request_id

PROBLEM_JSON = "application/problem+json"


class ProblemResponse(JSONResponse):
    """A problem body written as ASCII JSON: it encodes whatever text the request carried."""

    media_type = PROBLEM_JSON

    def render(self, content: Any) -> bytes:  # noqa: ANN401
        """Escape every non-ASCII character, so unpaired surrogates echoed in ``loc`` encode."""
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


STATUS_BY_CODE: dict[str, int] = {
    "malformed_json": 400,
    "webhook_rejected": 400,
    "login_rejected": 400,
    "unauthenticated": 401,
    "subscription_inactive": 402,
    "forbidden": 403,
    "unknown_role": 403,
    "self_approval_forbidden": 403,
    "not_an_approver": 403,
    "jwt_required": 403,
    "not_found": 404,
    "conflict": 409,
    "approval_already_resolved": 409,
    "audit_chain_conflict": 409,
    "illegal_transition": 409,
    "audit_record_not_erasable": 409,
    "legal_hold_active": 409,
    "run_still_active": 409,
    "outcome_definition_immutable": 409,
    "lock_lost": 409,
    "run_finished": 409,
    "run_canceled": 409,
    "approval_withdrawn": 409,
    "approval_changed": 409,
    "already_approved": 409,
    "already_subscribed": 409,
    "no_merchant_customer": 409,
    "connector_settings_defined": 409,
    "certification_transition_not_allowed": 409,
    "certification_blocked": 409,
    "certification_revoked": 409,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "validation_failed": 422,
    "invalid_json_value": 422,
    "unknown_parameter": 422,
    "unknown_action": 422,
    "schema_not_applicable": 422,
    "not_canonical_json": 422,
    "evidence_window_too_large": 422,
    "plan_not_purchasable": 422,
    "secret_value_refused": 422,
    "migration_not_possible": 422,
    "quota_exhausted": 429,
    "not_ready": 503,
    "database_unavailable": 503,
    "database_full": 503,
    "merchant_unavailable": 502,
    "identity_provider_unavailable": 502,
    "model_call_failed": 502,
}
"""HTTP status of each error code; anything else is a 500."""

RETRY_AFTER_SECONDS = 5
"""``Retry-After`` of every 503 problem: about the pool's wait, and the database's usual return."""

_HEADERS_BY_STATUS: dict[int, dict[str, str]] = {
    401: {"WWW-Authenticate": 'Bearer realm="ecp"'},
    503: {"Retry-After": str(RETRY_AFTER_SECONDS)},
}
"""Headers a problem of that status carries."""

METHOD_NOT_ALLOWED = "method_not_allowed"
HTTP_ERROR = "http_error"
INTERNAL_ERROR = "internal_error"

TRANSPORT_CODES: dict[str, tuple[int | None, str]] = {
    METHOD_NOT_ALLOWED: (405, "The path exists, but not with this method; `Allow` lists them."),
    HTTP_ERROR: (None, "Any other refusal of the HTTP layer itself, with its own status."),
    INTERNAL_ERROR: (500, "An unexpected failure, logged with the request id; no traceback."),
}
"""Codes the HTTP layer answers with itself, not from a core error: code → (status, or None
when the refusal's own is kept; meaning). ``docs/api/errors.md`` is rendered from it."""

_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}

log = logging.getLogger("ecp_http")


def problem(
    status: int,
    code: str,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> ProblemResponse:
    """A problem+json response."""
    body: dict[str, Any] = {
        "type": f"urn:ecp:error:{code}",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
    }
    current = request_id.get()
    if current is not None:
        body["instance"] = f"urn:ecp:request:{current}"
    if errors:
        body["errors"] = errors
    return ProblemResponse(body, status_code=status, headers=headers)


def from_error(error: EcpError) -> ProblemResponse:
    """The problem response for a core error; its detail names the settings it depends on."""
    status = STATUS_BY_CODE.get(error.code, 500)
    errors = [{"loc": list(e.loc), "msg": e.msg} for e in error.errors]
    headers = _HEADERS_BY_STATUS.get(status)
    if isinstance(error, QuotaExhausted):  # seconds to the end of the meter's billing period
        headers = {"Retry-After": str(error.retry_after_seconds)}
    detail = in_server_terms(error.detail, error.configuration)
    return problem(status, error.code, detail, errors or None, headers)


async def handle_ecp_error(_: Request, exc: Exception) -> ProblemResponse:
    """Starlette exception handler for EcpError."""
    assert isinstance(exc, EcpError)  # noqa: S101 - registered for EcpError only
    return from_error(exc)


async def handle_http_error(_: Request, exc: Exception) -> ProblemResponse:
    """Starlette's own HTTP errors (unknown route, wrong method) as problems."""
    assert isinstance(exc, HTTPException)  # noqa: S101
    code = {404: NotFound.code, 405: METHOD_NOT_ALLOWED}.get(exc.status_code, HTTP_ERROR)
    return problem(exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {}) or None)


def log_unexpected(exc: BaseException) -> None:
    """Log an unforeseen error once, with its traceback (the line carries the request id)."""
    log.error("unhandled error", exc_info=exc)


def unexpected() -> ProblemResponse:
    """The answer to an unforeseen error: a 500 problem without a traceback."""
    return problem(500, INTERNAL_ERROR, "The server failed to handle the request.")
