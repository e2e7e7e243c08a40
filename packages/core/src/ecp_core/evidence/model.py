"""Economic evidence on the wire: execution and outcome events, charge revisions, inventories.

The evidence chain is tenant → workflow → workflow_version → run → step → attempt. The tenant
comes from the caller's credentials, never from the body.
"""

import enum
import hashlib
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Generic, TypeVar

import attrs

from ecp_core.canonical import canonical_json, storable_text
from ecp_core.constraints import AwareUtc, Constraint, Items, Range, Text, checked
from ecp_core.errors import Conflict
from ecp_core.money import money_problem
from ecp_core.types import CostMeasurement
from ecp_core.wire import digest_form

MAX_BATCH = 1000
"""Events per ingestion request."""

MAX_ATTRIBUTES = 32
"""Keys in ``dimensions`` or ``metadata``."""

MAX_ATTRIBUTE_TEXT = 256
"""Characters in an attribute key's value when it is a string."""

MAX_SAFE_INTEGER = 2**53 - 1

Id = Annotated[str, Text(1, 256, trimmed=True)]
_KEY = Text(1, 64, pattern=r"[A-Za-z0-9_.:-]+")
DIGEST_PATTERN = r"sha256:[0-9a-f]{64}"


T = TypeVar("T")


@attrs.frozen
class Digested(Generic[T]):
    """An ingested item with the ``sha256:`` digest of its canonical JSON (idempotency key)."""

    item: T
    digest: str


class CostRole(enum.StrEnum):
    """``charge`` carries money under a tenant-wide charge id; ``summary`` is structural only."""

    CHARGE = "charge"
    SUMMARY = "summary"


class OutcomeMeasurement(enum.StrEnum):
    """Whether an outcome was observed or inferred."""

    MEASURED = "measured"
    INFERRED = "inferred"


class OutcomeMaturity(enum.StrEnum):
    """Whether the asserting source declares the outcome settled or still able to change."""

    FINAL = "final"
    PROVISIONAL = "provisional"


def scalar_problem(value: Any) -> str | None:  # noqa: ANN401 - any JSON value is examined
    """Why ``value`` is not a typed attribute value (string, finite number or boolean)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if abs(value) <= MAX_SAFE_INTEGER else "must be a safe integer"
    if isinstance(value, float):
        return None if value == value and abs(value) != float("inf") else "must be finite"  # noqa: PLR0124
    if isinstance(value, str):
        if len(value) > MAX_ATTRIBUTE_TEXT:
            return f"must have at most {MAX_ATTRIBUTE_TEXT} characters"
        return None if storable_text(value) else "must not contain U+0000 or lone surrogates"
    return "must be a string, a number or a boolean"


@attrs.frozen
class Attributes(Constraint):
    """A bounded object of typed values: up to 32 keys, each value a string, number or boolean."""

    def check(self, value: dict[str, Any]) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        if len(value) > MAX_ATTRIBUTES:
            return f"must have at most {MAX_ATTRIBUTES} keys"
        for key, item in value.items():
            key_problem = _KEY.check(key)
            if key_problem is not None:
                return f"key {key!r} {key_problem}"
            problem = scalar_problem(item)
            if problem is not None:
                return f"value of {key!r} {problem}"
        return None


@attrs.frozen
class Scalar(Constraint):
    """One typed value: a string, a finite number or a boolean."""

    def check(self, value: Any) -> str | None:  # noqa: ANN401
        """Return why ``value`` fails, or ``None``."""
        return scalar_problem(value)


@attrs.frozen
class Usd(Constraint):
    """A non-negative exact amount of USD with at most 15 integer and 18 decimal digits."""

    def check(self, value: Decimal) -> str | None:
        """Return why ``value`` fails, or ``None``."""
        return money_problem(value)


Money = Annotated[Decimal, Usd()]
Dimensions = Annotated[dict[str, Any], Attributes()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ExecutionEvent:
    """One priced (or structural) piece of work of a run: a model call, a tool call, a step.

    ``cost_usd`` null means unknown (``cost_measurement`` must then be ``unmeasured``); zero is
    an observed zero. A ``charge`` names its tenant-wide ``charge_id``; a ``summary`` carries no
    money. Provider scope ids (``project_id``, ``workspace_id``), ``provider`` and ``model`` live
    in ``metadata``.
    """

    event_id: Id
    workflow_id: Id
    workflow_version: Id
    occurred_at: Annotated[datetime, AwareUtc()]
    run_id: Id | None = None
    step_id: Id | None = None
    """The step the work belongs to."""
    attempt: Annotated[int, Range(1, 10_000)] = 1
    """The step's attempt (1 by default; spend on a later one is repeated-attempt spend)."""
    subject_id: Id | None = None
    """The entity analysed (a customer, a document), for cohorts."""
    dimensions: Dimensions = attrs.field(factory=dict)
    """Typed attributes for cohorts (`cohort=dimension:<key>`)."""
    cost_usd: Money | None = None
    cost_measurement: CostMeasurement = CostMeasurement.UNMEASURED
    """How the cost is known: `unmeasured` exactly when `cost_usd` is null."""
    cost_role: CostRole = CostRole.CHARGE
    """`charge` carries money under `charge_id`; `summary` is structural and carries none."""
    charge_id: Id | None = None
    """The tenant-wide id of the charge; required for a charge, owned by one event."""
    source_window_id: Id | None = None
    """The capture window that delivered the event."""
    join_key: Id | None = None
    """The key erasure matches with the audit record's `execution_metadata.join_key`."""
    metadata: Dimensions = attrs.field(factory=dict)
    """The provider, the model and provider scope ids such as `project_id`."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeEvent:
    """An assertion about how a run ended; the latest one not in the future counts."""

    event_id: Id
    workflow_id: Id
    workflow_version: Id
    run_id: Id
    outcome_type: Annotated[str, Text(1, 128, trimmed=True)]
    """The kind of outcome asserted."""
    asserted_at: Annotated[datetime, AwareUtc()]
    """When it was asserted; the latest assertion not in the future counts."""
    value: Annotated[Any, Scalar()] = True
    """A string, number or boolean, judged by the version's success predicate."""
    outcome_measurement: OutcomeMeasurement = OutcomeMeasurement.MEASURED
    """Whether the outcome was observed or inferred."""
    maturity: OutcomeMaturity = OutcomeMaturity.FINAL
    """Whether the source declares the outcome settled or still able to change."""
    subject_id: Id | None = None
    """The entity analysed (a customer, a document), for cohorts."""
    join_key: Id | None = None
    """The key erasure matches with the audit record's `execution_metadata.join_key`."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChargeRevision:
    """A later price for a charge; revisions are append-only and the latest one prices it."""

    event_id: Id
    charge_id: Id
    """The charge revised."""
    revised_at: Annotated[datetime, AwareUtc()]
    """When the price was revised; the latest revision prices the charge."""
    cost_usd: Money | None = None
    cost_measurement: CostMeasurement = CostMeasurement.MEASURED
    """How the cost is known: `unmeasured` exactly when `cost_usd` is null."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceWindow:
    """What one capture window (``source_window_id``) is expected to have delivered."""

    source_window_id: Id
    """The capture window."""
    expected_events: Annotated[int, Range(0, 10_000_000)]
    """How many events the window delivered."""
    event_ids_digest: Annotated[str, Text(pattern=DIGEST_PATTERN)]
    """`sha256:` over the RFC 8785 JSON array of the window's event ids, sorted."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceInventory:
    """A source's declaration of what it captured for one workflow version.

    The capture interval is inclusive at both ends. ``event_ids_digest`` is ``sha256:`` over the
    RFC 8785 JSON array of the window's event ids sorted by code point.
    """

    event_id: Id
    workflow_id: Id
    workflow_version: Id
    capture_start: Annotated[datetime, AwareUtc()]
    """The start of the capture, included (RFC 3339)."""
    capture_end: Annotated[datetime, AwareUtc()]
    """The end of the capture, included (RFC 3339)."""
    terminal_run_ids: Annotated[tuple[Id, ...], Items(0, 10_000, unique=True)]
    """The runs that ended within the capture."""
    windows: Annotated[tuple[SourceWindow, ...], Items(0, 1000)]
    """What each capture window delivered."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ExecutionBatch:
    """Body of ``POST /v1/evidence/executions``."""

    events: Annotated[tuple[ExecutionEvent, ...], Items(1, MAX_BATCH)]
    """The execution events to store."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeBatch:
    """Body of ``POST /v1/evidence/outcomes``."""

    events: Annotated[tuple[OutcomeEvent, ...], Items(1, MAX_BATCH)]
    """The outcome events to store."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChargeRevisionBatch:
    """Body of ``POST /v1/evidence/charge-revisions``."""

    events: Annotated[tuple[ChargeRevision, ...], Items(1, MAX_BATCH)]
    """The charge revisions to store."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SourceInventoryBatch:
    """Body of ``POST /v1/evidence/source-inventories``."""

    events: Annotated[tuple[SourceInventory, ...], Items(1, MAX_BATCH)]
    """The source inventories to store."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class IngestResult:
    """What a batch did: events newly stored and exact replays left as they were."""

    received: int
    """Events in the batch."""
    stored: int
    """Events newly stored."""
    replayed: int
    """Exact repeats of stored events, left as they were."""


class PredicateKind(enum.StrEnum):
    """How an outcome value is judged a success."""

    EQUALS = "equals"
    AT_LEAST = "at_least"
    GREATER_THAN = "greater_than"
    AT_MOST = "at_most"
    LESS_THAN = "less_than"


@attrs.frozen(kw_only=True, field_transformer=checked)
class SuccessPredicate:
    """When an outcome value counts as success.

    ``equals`` compares the value (type included) with ``value``; the others compare a numeric
    value with ``threshold``.
    """

    kind: PredicateKind
    """How an outcome value is judged a success."""
    value: Annotated[Any, Scalar()] | None = None
    """The value `equals` compares with (type included)."""
    threshold: Decimal | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeDefinitionRequest:
    """Body of ``POST /v1/debugger/outcome-definitions``: the success contract of a version."""

    workflow_id: Id
    workflow_version: Id
    outcome_type: Annotated[str, Text(1, 128, trimmed=True)]
    """The outcome type that ends a run of the version."""
    predicate: SuccessPredicate
    """When that outcome's value counts as success."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class OutcomeDefinition:
    """A stored, immutable success contract with its digest."""

    tenant_id: str
    workflow_id: str
    workflow_version: str
    outcome_type: str
    """The outcome type that ends a run of the version."""
    predicate: SuccessPredicate
    """When that outcome's value counts as success."""
    digest: str
    """The digest of the definition."""
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str


def digest_of(value: Any) -> str:  # noqa: ANN401 - any wire model
    """``sha256:`` over the RFC 8785 JSON of a model's wire form (decimals canonically spelt)."""
    return "sha256:" + hashlib.sha256(canonical_json(digest_form(value))).hexdigest()


def changed_replay(event_id: str) -> Conflict:
    """An event id already stored with another digest (a replay that changed)."""
    return Conflict(f"event {event_id} was stored with other content")


def charge_taken(charge_id: str, owner: str | None) -> Conflict:
    """A charge id that another execution event (``owner``) already carries."""
    return Conflict(f"charge {charge_id} belongs to event {owner}")


def definition_taken(workflow_version: str) -> Conflict:
    """A second outcome definition for one workflow version (definitions are immutable)."""
    return Conflict(f"workflow version {workflow_version} has a definition")
