"""The one exception root of the core and its coded subclasses.

Every error carries a stable snake_case ``code``; adapters map codes to transport statuses in one
table and never inspect messages. Messages speak the core's terms: an error that a piece of
configuration would lift names it as a :class:`Configurable` in ``configuration``, and the
application embedding the core says how it is configured there (ADR 0072).
"""

import enum
from collections.abc import Sequence
from typing import ClassVar

import attrs


@attrs.frozen
class FieldError:
    """One failing field: where it is (``loc``) and what is wrong with it (``msg``)."""

    loc: tuple[str | int, ...]
    msg: str


class Configurable(enum.StrEnum):
    """A piece of configuration the application embedding the core provides, by the core's name."""

    MODEL_CATALOG = "model_catalog"
    BACKTEST_DIGEST_KEY = "backtest_digest_key"
    CONNECTOR_DEFINITIONS = "connector_definitions"
    SECRET_STORE = "secret_store"  # noqa: S105 - names the store, holds no secret
    AUDIT_SIGNING_KEY = "audit_signing_key"


class EcpError(Exception):
    """Root of every error the core raises on purpose."""

    code: ClassVar[str] = "ecp_error"

    def __init__(
        self,
        detail: str,
        *,
        errors: Sequence[FieldError] = (),
        configuration: Sequence[Configurable] = (),
    ) -> None:
        """Keep a human ``detail``, every failing field, and the configuration it depends on.

        ``configuration`` names, in the core's terms, what to configure to change the answer.
        """
        super().__init__(detail)
        self.detail = detail
        self.errors = tuple(errors)
        self.configuration = tuple(configuration)


class ValidationFailed(EcpError):
    """Input does not fit its schema or a rule; ``errors`` names each failing field."""

    code = "validation_failed"


class SchemaNotApplicable(ValidationFailed):
    """A valid JSON Schema that cannot be applied (a reference loop, an unusable reference)."""

    code = "schema_not_applicable"


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


class RunFinished(Conflict):
    """The run has already ended (completed, failed or terminated): it cannot be canceled."""

    code = "run_finished"


class RunCanceled(Conflict):
    """The task's run was canceled and the task withdrawn: a late report changes nothing."""

    code = "run_canceled"


class ApprovalWithdrawn(Conflict):
    """The approval was withdrawn when its run was canceled; it can no longer be resolved."""

    code = "approval_withdrawn"


class ApprovalChanged(Conflict):
    """The approval changed since the approver saw it: nothing was resolved.

    Its ``action_digest`` no longer matches: escalated, withdrawn or approved by another.
    """

    code = "approval_changed"


class AlreadyApproved(Conflict):
    """The caller already approved this approval; another approval must come from someone else."""

    code = "already_approved"


class MigrationNotPossible(EcpError):
    """A run cannot move to the version asked (ADR 0090); the detail says why. Nothing changed."""

    code = "migration_not_possible"


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


class SelfApprovalForbidden(Forbidden):
    """The approval refuses the person who started its run (``forbid_self_approval``)."""

    code = "self_approval_forbidden"


class NotAnApprover(Forbidden):
    """The approval names its approvers (roles or subjects) and the caller is not one of them."""

    code = "not_an_approver"


class JwtRequired(Forbidden):
    """The operation takes a JWT bearer token; API keys and browser sessions are refused."""

    code = "jwt_required"


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


class DatabaseFull(DatabaseUnavailable):
    """The database has no disk space left for a write: nothing of the attempt was kept.

    The operator frees space or grows the disk; the service goes on by itself once it can write.
    """

    code = "database_full"


class WebhookRejected(EcpError):
    """A merchant event that is not signed correctly, or breaks a validity rule: nothing changed."""

    code = "webhook_rejected"


class PlanNotPurchasable(ValidationFailed):
    """A checkout for a plan that cannot be bought (only ``solo`` can)."""

    code = "plan_not_purchasable"


class AlreadySubscribed(Conflict):
    """A checkout while the tenant's merchant subscription lives on: manage it in the portal."""

    code = "already_subscribed"


class NoMerchantCustomer(Conflict):
    """A portal hand-off for a tenant the merchant does not know yet (no checkout completed)."""

    code = "no_merchant_customer"


class MerchantUnavailable(EcpError):
    """The merchant of record could not be reached, or answered with an error."""

    code = "merchant_unavailable"


class SubscriptionInactive(EcpError):
    """The tenant has no live subscription (none, canceled, paused, past due or a trial ended)."""

    code = "subscription_inactive"


class QuotaExhausted(EcpError):
    """A meter of the tenant's plan is used up for this billing period; nothing was counted.

    ``retry_after_seconds`` is the whole number of seconds until the period ends (at least 1).
    """

    code = "quota_exhausted"

    def __init__(self, detail: str, *, meter: str, retry_after_seconds: int) -> None:
        """Name the exhausted ``meter`` and when its period ends."""
        super().__init__(detail)
        self.meter = meter
        self.retry_after_seconds = retry_after_seconds


class LoginRejected(EcpError):
    """A login callback or session refresh that cannot be accepted: nothing was bound or created.

    No login in progress (state cookie missing, expired or tampered), a state that does not
    match, an error the provider reported, a code or refresh token the provider refused (replayed
    or revoked), or an access token that fails verification or names another organization.
    """

    code = "login_rejected"


class UnknownRole(EcpError):
    """The identity provider's token names a role slug the service does not know."""

    code = "unknown_role"


class IdentityProviderUnavailable(EcpError):
    """The identity provider could not be reached, or answered with an error of its own."""

    code = "identity_provider_unavailable"


class ModelCallFailed(EcpError):
    """A model provider call failed after its retries (502 ``model_call_failed`` in a request).

    ``failure`` is a :class:`ecp_core.models.model.CallFailure` value; ``attempts`` the tries.
    """

    code = "model_call_failed"

    def __init__(self, detail: str, *, failure: str, attempts: int = 1) -> None:
        """Say why (``failure``) and after how many tries."""
        super().__init__(detail)
        self.failure = failure
        self.attempts = attempts


class CertificationTransitionNotAllowed(Conflict):
    """The certification transition table does not connect the current state to the one asked."""

    code = "certification_transition_not_allowed"


class CertificationBlocked(Conflict):
    """The table allows the certification's move, but blockers stand in the evaluation now."""

    code = "certification_blocked"


class CertificationRevoked(Conflict):
    """The certification is revoked: nothing about it changes any more."""

    code = "certification_revoked"


class SecretValueRefused(ValidationFailed):
    """A connector's params hold a secret value, or a key naming one: give the secret's name."""

    code = "secret_value_refused"


class ConnectorSettingsDefined(Conflict):
    """The connector is defined by the server's settings: the API cannot store, change or delete it."""

    code = "connector_settings_defined"


def exists(kind: str, ident: str) -> Conflict:
    """What every store raises for a new ``kind`` (``"run"``) whose identity is taken."""
    return Conflict(f"{kind} {ident} exists")


def missing(kind: str, ident: str) -> NotFound:
    """What every store raises when the ``kind`` to replace is not stored (for this tenant)."""
    return NotFound(f"{kind} {ident} not found")
