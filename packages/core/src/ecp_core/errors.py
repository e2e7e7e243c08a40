"""The one exception root of the core and its coded subclasses.

Every error carries a stable snake_case ``code``; adapters map codes to transport statuses in one
table and never inspect messages.
"""

from collections.abc import Sequence
from typing import ClassVar

import attrs


@attrs.frozen
class FieldError:
    """One failing field: where it is (``loc``) and what is wrong with it (``msg``)."""

    loc: tuple[str | int, ...]
    msg: str


class EcpError(Exception):
    """Root of every error the core raises on purpose."""

    code: ClassVar[str] = "ecp_error"

    def __init__(self, detail: str, *, errors: Sequence[FieldError] = ()) -> None:
        """Keep a human ``detail`` and, for validation, every failing field."""
        super().__init__(detail)
        self.detail = detail
        self.errors = tuple(errors)


class ValidationFailed(EcpError):
    """Input does not fit its schema or a rule; ``errors`` names each failing field."""

    code = "validation_failed"


class UnknownAction(ValidationFailed):
    """A graph names an action the service cannot run; ``errors`` locates each such name."""

    code = "unknown_action"


class NotFound(EcpError):
    """Unknown resource, or one that belongs to another tenant."""

    code = "not_found"


class Conflict(EcpError):
    """The request conflicts with what is stored (changed replay, duplicate)."""

    code = "conflict"


class ApprovalAlreadyResolved(Conflict):
    """An approval that is no longer pending was resolved again."""

    code = "approval_already_resolved"


class IllegalTransition(EcpError):
    """A run was asked to move between states the state machine does not connect."""

    code = "illegal_transition"


class ChainConflict(Conflict):
    """An audit append did not extend the current chain head (a would-be fork)."""

    code = "audit_chain_conflict"


class AuditRecordNotErasable(EcpError):
    """``crypto_erase`` on a digest_version 1 record, whose digest covers plaintext."""

    code = "audit_record_not_erasable"


class NotCanonicalizable(ValidationFailed):
    """A value cannot be written as RFC 8785 canonical JSON (NaN, huge integer, non-JSON type)."""

    code = "not_canonical_json"


class MalformedRequest(EcpError):
    """The request body is not JSON at all."""

    code = "malformed_json"


class Unauthenticated(EcpError):
    """Credentials are missing, malformed, expired or unknown."""

    code = "unauthenticated"


class Forbidden(EcpError):
    """The caller is authenticated but its roles do not grant the permission."""

    code = "forbidden"


class NotReady(EcpError):
    """The service cannot serve yet (schema not current, a required task stopped)."""

    code = "not_ready"


class LegalHoldActive(Conflict):
    """An active legal hold covers the run or tenant: erasure is refused."""

    code = "legal_hold_active"


class RunStillActive(Conflict):
    """The run has not ended; it cannot be erased while it may still continue."""

    code = "run_still_active"


class EvidenceWindowTooLarge(ValidationFailed):
    """The window holds more execution events than one request may aggregate; narrow it."""

    code = "evidence_window_too_large"


class OutcomeDefinitionImmutable(Conflict):
    """The workflow version already has a different outcome definition (rules never change)."""

    code = "outcome_definition_immutable"


class LockLost(Conflict):
    """The task's lock expired and another worker claimed it: this lock token no longer counts."""

    code = "lock_lost"


class InvalidJsonValue(ValidationFailed):
    """JSON text that is not I-JSON (RFC 7493) or is nested deeper than the service accepts."""

    code = "invalid_json_value"


class UnknownParameter(ValidationFailed):
    """A query parameter the operation does not declare."""

    code = "unknown_parameter"


class PayloadTooLarge(EcpError):
    """The request body is larger than the service accepts for this route."""

    code = "payload_too_large"


class UnsupportedMediaType(EcpError):
    """The request body is not ``application/json`` in UTF-8."""

    code = "unsupported_media_type"


class DatabaseUnavailable(EcpError):
    """The database cannot be reached now (stopped, restarting, no free connection in time).

    ``connection_lost`` is true when a connection broke while in use (as opposed to none being
    had within the wait): nothing that connection sent was kept, unless a commit was under way.
    """

    code = "database_unavailable"

    def __init__(self, detail: str, *, connection_lost: bool = False) -> None:
        """Keep the one-line ``detail`` (never a password) and how the database was lost."""
        super().__init__(detail)
        self.connection_lost = connection_lost


def exists(kind: str, ident: str) -> Conflict:
    """What every store raises for a new ``kind`` (``"run"``) whose identity is taken."""
    return Conflict(f"{kind} {ident} exists")


def missing(kind: str, ident: str) -> NotFound:
    """What every store raises when the ``kind`` to replace is not stored (for this tenant)."""
    return NotFound(f"{kind} {ident} not found")
