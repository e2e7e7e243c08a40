"""Provider statements (bills) and reconciliation reports (``measured-cost-proportional/1``)."""

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Constraint, Items, Text, checked
from ecp_core.debugger.tally import OutcomeStatus
from ecp_core.evidence.model import Money

METHOD_VERSION = "measured-cost-proportional/1"
LEGACY_METHOD_VERSION = "legacy_unversioned"
"""What a stored report without a method_version reads as."""

STATEMENT_ID = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,191}"
PROVIDER = r"[a-z0-9][a-z0-9._-]{0,63}"
MAX_BUCKETS = 10_000

SCOPE_KEYS = frozenset({"project_id", "workspace_id", "organization_id", "region"})
"""Provider-owned scope identifiers a bucket may name; nothing else (no keys, prompts,
responses, customer identifiers or invoices)."""


class Currency(enum.StrEnum):
    """Statements are in USD only."""

    USD = "USD"


class SourceKind(enum.StrEnum):
    """Where a statement's figures came from."""

    MANUAL = "manual"
    COST_API = "cost_api"
    INVOICE = "invoice"


@attrs.frozen
class ScopeIdentifiers(Constraint):
    """Only provider scope identifiers (:data:`SCOPE_KEYS`), each 1 to 256 printable characters."""

    def check(self, value: dict[str, str]) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        for key, item in value.items():
            if key not in SCOPE_KEYS:
                allowed = ", ".join(sorted(SCOPE_KEYS))
                return f"key {key!r} is not a provider scope identifier (allowed: {allowed})"
            problem = Text(1, 256, no_whitespace=True).check(item)
            if problem is not None:
                return f"value of {key!r} {problem}"
        return None


@attrs.frozen
class Positive(Constraint):
    """Greater than zero."""

    def check(self, value: Decimal) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        return None if value > 0 else "must be positive"


PositiveUsd = Annotated[Money, Positive()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ProviderBucket:
    """A billed amount for a half-open period, optionally narrowed to a model and scope ids."""

    bucket_id: Annotated[str, Text(1, 192, trimmed=True)]
    """The bucket's id within the statement."""
    period_start: Annotated[datetime, AwareUtc()]
    """The start of the billed period, included (RFC 3339)."""
    period_end: Annotated[datetime, AwareUtc()]
    """The end of the billed period, excluded (RFC 3339)."""
    amount_usd: PositiveUsd
    model: Annotated[str, Text(1, 256, trimmed=True)] | None = None
    """The model the amount is for, when the provider narrows it to one."""
    provider_dimensions: Annotated[dict[str, str], ScopeIdentifiers()] = attrs.field(factory=dict)
    """Provider scope ids the amount is narrowed to (such as `project_id`)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ProviderStatement:
    """Body of ``POST /v1/reconciliation/provider-bills``: one provider's bill for a period."""

    statement_id: Annotated[str, Text(1, 192, pattern=STATEMENT_ID)]
    """The provider's id of the statement; with the provider, it names it."""
    provider: Annotated[str, Text(1, 64, pattern=PROVIDER)]
    """The provider that billed."""
    period_start: Annotated[datetime, AwareUtc()]
    """The start of the billed period, included (RFC 3339)."""
    period_end: Annotated[datetime, AwareUtc()]
    """The end of the billed period, excluded (RFC 3339)."""
    currency: Currency
    """The currency of the amounts."""
    billed_total_usd: PositiveUsd
    source_kind: SourceKind
    """Where the figures came from: entered by hand, or read from the provider's cost API."""
    buckets: Annotated[tuple[ProviderBucket, ...], Items(1, MAX_BUCKETS)]
    """The billed amounts the statement is split into."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class StoredStatement:
    """An imported statement: immutable per (tenant, provider, statement_id)."""

    tenant_id: str
    statement: ProviderStatement
    digest: Annotated[str, Text(pattern=r"sha256:[0-9a-f]{64}")]
    imported_at: Annotated[datetime, AwareUtc()]
    imported_by: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class StatementImported:
    """The answer to an import: the stored statement's identity and digest."""

    provider: str
    """The provider that billed."""
    statement_id: str
    """The provider's id of the statement."""
    digest: str
    """The digest of the stored statement."""
    imported_at: Annotated[datetime, AwareUtc()]
    """When it was imported (RFC 3339, UTC)."""
    buckets: int
    """How many buckets it has."""
    billed_total_usd: Decimal


class ClosureState(enum.StrEnum):
    """How far a report closes the bill (see ``docs/reconciliation.md``)."""

    RECONCILED = "reconciled"
    ALLOCATED_WITH_VARIANCE = "allocated_with_variance"
    OUTCOMES_UNRESOLVED = "outcomes_unresolved"
    UNRECONCILED = "unreconciled"


class BucketStatus(enum.StrEnum):
    """Whether a bucket's dollars were allocated, and if not, why."""

    ALLOCATED = "allocated"
    NO_MEASURED_MATCH = "no_measured_match"
    OVERLAPPING = "overlapping"


@attrs.frozen(kw_only=True, field_transformer=checked)
class AllocationGroup:
    """Billed and measured dollars of one bucket for one workflow version and outcome status."""

    workflow_id: str
    workflow_version: str
    outcome_status: OutcomeStatus
    """How the runs ended: success, failure or unresolved."""
    billed_usd: Decimal
    telemetry_usd: Decimal


@attrs.frozen(kw_only=True, field_transformer=checked)
class MatchedEvidence:
    """Execution events a bucket's scope matched, by how their cost is known."""

    measured_events: int
    """Matched events with a measured cost."""
    estimated_events: int
    """Matched events with an estimated cost."""
    unmeasured_events: int
    """Matched events whose cost is unknown."""
    measured_usd: Decimal
    estimated_usd: Decimal


@attrs.frozen(kw_only=True, field_transformer=checked)
class BucketAllocation:
    """One bucket: its scope, its status, what it matched and where its dollars went."""

    bucket_id: str
    """The bucket's id within the statement."""
    period_start: Annotated[datetime, AwareUtc()]
    """The start of the billed period, included (RFC 3339)."""
    period_end: Annotated[datetime, AwareUtc()]
    """The end of the billed period, excluded (RFC 3339)."""
    model: str | None
    """The model the amount is for, when narrowed to one."""
    provider_dimensions: dict[str, str]
    """Provider scope ids the amount is narrowed to."""
    amount_usd: Decimal
    status: BucketStatus
    """Whether the bucket's dollars were allocated, and if not, why."""
    overlaps_with: tuple[str, ...]
    """The buckets whose scope overlaps this one's."""
    matched: MatchedEvidence
    """The execution events the bucket's scope matched."""
    groups: tuple[AllocationGroup, ...]
    """Where the bucket's dollars went, by workflow version and outcome."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ReconciliationTotals:
    """The report's totals; ``allocated + unreconciled = billed`` exactly."""

    billed_total_usd: Decimal
    allocated_billed_usd: Decimal
    unreconciled_billed_usd: Decimal
    telemetry_measured_usd: Decimal
    telemetry_variance_usd: Decimal
    unbilled_telemetry_usd: Decimal
    outcome_unresolved_usd: Decimal


@attrs.frozen(kw_only=True, field_transformer=checked)
class ReconciliationReport:
    """A statement set against the tenant's measured execution evidence."""

    method_version: str
    """The version of the reconciliation method."""
    provider: str
    """The provider that billed."""
    statement_id: str
    """The provider's id of the statement."""
    statement_digest: str
    """The digest of the stored statement."""
    period_start: Annotated[datetime, AwareUtc()]
    """The start of the billed period, included (RFC 3339)."""
    period_end: Annotated[datetime, AwareUtc()]
    """The end of the billed period, excluded (RFC 3339)."""
    as_of: Annotated[datetime, AwareUtc()]
    """The time the evidence was read at (RFC 3339, UTC)."""
    closure_state: ClosureState
    """How far the report closes the bill."""
    totals: ReconciliationTotals
    """The report's totals."""
    allocations: tuple[BucketAllocation, ...]
    """Each bucket and where its dollars went."""


def report_method_version(payload: dict[str, object]) -> str:
    """The method a stored report payload was computed with; unversioned ones are legacy."""
    found = payload.get("method_version")
    return found if isinstance(found, str) and found else LEGACY_METHOD_VERSION
