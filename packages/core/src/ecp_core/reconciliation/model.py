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
    period_start: Annotated[datetime, AwareUtc()]
    period_end: Annotated[datetime, AwareUtc()]
    amount_usd: PositiveUsd
    model: Annotated[str, Text(1, 256, trimmed=True)] | None = None
    provider_dimensions: Annotated[dict[str, str], ScopeIdentifiers()] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ProviderStatement:
    """Body of ``POST /v1/reconciliation/provider-bills``: one provider's bill for a period."""

    statement_id: Annotated[str, Text(1, 192, pattern=STATEMENT_ID)]
    provider: Annotated[str, Text(1, 64, pattern=PROVIDER)]
    period_start: Annotated[datetime, AwareUtc()]
    period_end: Annotated[datetime, AwareUtc()]
    currency: Currency
    billed_total_usd: PositiveUsd
    source_kind: SourceKind
    buckets: Annotated[tuple[ProviderBucket, ...], Items(1, MAX_BUCKETS)]


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
    statement_id: str
    digest: str
    imported_at: Annotated[datetime, AwareUtc()]
    buckets: int
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
    billed_usd: Decimal
    telemetry_usd: Decimal


@attrs.frozen(kw_only=True, field_transformer=checked)
class MatchedEvidence:
    """Execution events a bucket's scope matched, by how their cost is known."""

    measured_events: int
    estimated_events: int
    unmeasured_events: int
    measured_usd: Decimal
    estimated_usd: Decimal


@attrs.frozen(kw_only=True, field_transformer=checked)
class BucketAllocation:
    """One bucket: its scope, its status, what it matched and where its dollars went."""

    bucket_id: str
    period_start: Annotated[datetime, AwareUtc()]
    period_end: Annotated[datetime, AwareUtc()]
    model: str | None
    provider_dimensions: dict[str, str]
    amount_usd: Decimal
    status: BucketStatus
    overlaps_with: tuple[str, ...]
    matched: MatchedEvidence
    groups: tuple[AllocationGroup, ...]


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
    provider: str
    statement_id: str
    statement_digest: str
    period_start: Annotated[datetime, AwareUtc()]
    period_end: Annotated[datetime, AwareUtc()]
    as_of: Annotated[datetime, AwareUtc()]
    closure_state: ClosureState
    totals: ReconciliationTotals
    allocations: tuple[BucketAllocation, ...]


def report_method_version(payload: dict[str, object]) -> str:
    """The method a stored report payload was computed with; unversioned ones are legacy."""
    found = payload.get("method_version")
    return found if isinstance(found, str) and found else LEGACY_METHOD_VERSION
