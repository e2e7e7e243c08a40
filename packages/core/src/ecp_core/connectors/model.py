"""Connectors (ADR 0044): named configurations of external backends, and their cost-capped tests.

A connector is either settings-defined (``source: "env"``, every tenant sees it, ``scope:
"global"``) or stored by a tenant through the API (``source: "api"``, ``scope: "tenant"``). Its
``params`` hold non-secret values and secret *references* (names) only.
"""

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Constraint, Text, checked
from ecp_core.money import money_problem
from ecp_core.types import CostMeasurement

REF_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
"""A connector ref: 1 to 128 letters, digits, ``.``, ``_``, ``:`` or ``-``, not starting with a sign."""

ConnectorRef = Annotated[str, Text(1, 128, pattern=REF_PATTERN)]
TestId = Annotated[str, Text(1, 128)]
"""A campaign, operation or run id of a connector test (spec limit "connector test ids")."""


class BackendType(enum.StrEnum):
    """What a connector reaches: a model of the catalog, or an HTTP endpoint."""

    MODEL = "model"
    HTTP = "http"


class ConnectorSource(enum.StrEnum):
    """Where a connector is defined: the server's settings, or the tenant's API calls."""

    ENV = "env"
    API = "api"


class ConnectorScope(enum.StrEnum):
    """Who sees a connector: every tenant (settings-defined) or the tenant that stored it."""

    GLOBAL = "global"
    TENANT = "tenant"


class CleanupStatus(enum.StrEnum):
    """What became of a test's reservation."""

    RELEASED = "released"
    """The measured cost was committed and the rest of the reservation released."""
    NOT_RESERVED = "not_reserved"
    """Nothing was reserved: the test was refused before any call."""
    ABANDONED = "abandoned"
    """The testing process died: the sweep committed the whole reservation as estimated."""


@attrs.frozen
class PositiveUsd(Constraint):
    """A positive amount of USD as a JSON number or an exact decimal string (money's limits)."""

    def check(self, value: Any) -> str | None:  # noqa: ANN401 - a number or a string
        """Return why ``value`` is not a positive amount, or None."""
        try:
            amount = usd_amount(value)
        except ValueError as exc:
            return str(exc)
        if amount <= 0:
            return "must be greater than 0"
        return money_problem(amount)

    def schema_keywords(self) -> dict[str, Any]:
        """The JSON Schema of such an amount (rendered into the OpenAPI document)."""
        return {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": r"^(?:[0-9]+(?:\.[0-9]+)?)$"},
            ],
            "description": "A positive amount of USD: a number, or an exact decimal string.",
        }


def usd_amount(value: object) -> Decimal:
    """A number or decimal string as the Decimal it names; ValueError for anything else.

    A JSON number arrives as a float: it is read as the shortest decimal naming the same
    double (``0.4`` is exactly ``0.4``); send a string for more than 15 significant digits.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        msg = "must be a number or an exact decimal string"
        raise ValueError(msg)  # noqa: TRY004 - one error kind for every bad amount
    text = repr(value) if isinstance(value, float) else str(value)
    try:
        amount = Decimal(text)
    except ArithmeticError:
        msg = "must be a number or an exact decimal string"
        raise ValueError(msg) from None
    if not amount.is_finite():
        msg = "must be a finite amount"
        raise ValueError(msg)
    return amount


UsdInput = Annotated[Any, PositiveUsd()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorCreateRequest:
    """Body of ``POST /v1/connectors``: the ref, the backend type and its params (no secrets)."""

    ref: ConnectorRef
    """The connector's name within the tenant."""
    backend_type: BackendType
    """The kind of backend it connects to."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """The backend's settings: non-secret values and the names of secrets only."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorUpdateRequest:
    """Body of ``PUT /v1/connectors/{ref}``: the new backend type and params (replaced whole)."""

    backend_type: BackendType
    """The kind of backend it connects to."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """The backend's settings, replaced whole: non-secret values and secret names only."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Connector:
    """A connector as stored or read from the settings; ``tenant_id`` None: settings-defined."""

    ref: ConnectorRef
    backend_type: BackendType
    params: dict[str, Any]
    """Validated for the backend type: non-secret values and secret names only."""
    source: ConnectorSource
    tenant_id: str | None = None
    created_at: Annotated[datetime, AwareUtc()] | None = None
    updated_at: Annotated[datetime, AwareUtc()] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorSummaryResponse:
    """A connector as the API shows it: never a secret value, only the names of secrets."""

    ref: str
    """The connector's name."""
    connector_type: str
    """What the connector tests: ``model`` or ``http`` (one connector type per backend type)."""
    scope: ConnectorScope
    """Who sees it: every tenant (defined in the settings) or the tenant that stored it."""
    backend: str
    """Where a test goes: ``<provider>:<model>`` of the catalog, or the HTTP origin."""
    backend_type: BackendType | None = None
    """The kind of backend it connects to."""
    params: dict[str, Any] | None = None
    """The backend's settings: non-secret values and the names of secrets only."""
    source: ConnectorSource = ConnectorSource.ENV
    """Where it is defined: the server's settings or the API."""


@attrs.frozen(kw_only=True)
class ConnectorListResponse:
    """A page of the connectors a tenant sees, by ref; ``next_cursor`` None on the last page."""

    connectors: tuple[ConnectorSummaryResponse, ...]
    """One page of the connectors the tenant sees, by ref."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorTestRequest:
    """Body of ``POST /v1/connectors/{ref}/test``: the ids, this test's cap and the run's cap."""

    campaign_id: TestId
    """The campaign the test belongs to; with `operation_id`, the idempotency key."""
    operation_id: TestId
    """With the campaign, the idempotency key: a repeat returns the stored answer."""
    max_cost_usd: UsdInput
    """The most this one test may cost (its reservation never exceeds it)."""
    run_cap_usd: UsdInput | None = None
    """The most the (campaign, run) scope may have committed and reserved, this test included."""
    run_id: TestId | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorTestResponse:
    """A test's answer: always 200; ``ok`` false with ``detail`` saying why."""

    ok: bool
    """Whether the test succeeded; `detail` says why not."""
    latency_ms: float
    """How long the call took, in milliseconds."""
    audit_event_id: str | None = None
    """The audit event recording the test."""
    campaign_id: str | None = None
    """The campaign the test belongs to."""
    cleanup_status: CleanupStatus | None = None
    """What became of the test's reservation."""
    cost_event_id: str | None = None
    """The committed ledger entry (``GET /v1/connector-costs``); None when nothing was called."""
    cost_measurement: CostMeasurement | None = None
    """How the cost is known: measured, estimated or not at all."""
    detail: str | None = None
    """Why the test failed, in words."""
    estimated_cost_usd: Decimal | None = None
    """The worst case reserved before the call (a refusal: the smallest test's worst case)."""
    operation_id: str | None = None
    """The test's operation id within the campaign."""
    provider_request_id: str | None = None
    """The provider's id of the request, to trace it on their side."""


class TrialState(enum.StrEnum):
    """A stored test: its reservation is held while the call runs, then it is finished."""

    RESERVED = "reserved"
    FINISHED = "finished"


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorTest:
    """One test as stored, by (tenant, campaign, operation): the idempotency record."""

    tenant_id: str
    campaign_id: TestId
    operation_id: TestId
    run_id: TestId | None
    connector_ref: str
    request_digest: str
    state: TrialState
    reserved_usd: Decimal
    created_at: Annotated[datetime, AwareUtc()]
    response: ConnectorTestResponse | None = None
    """The answer, once finished; a repeat of the request returns it."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CostScope:
    """What a (tenant, campaign, run) scope has committed and holds reserved, exactly."""

    tenant_id: str
    campaign_id: TestId
    run_id: TestId | None
    committed_usd: Decimal = Decimal(0)
    reserved_usd: Decimal = Decimal(0)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConnectorCostEntry:
    """One committed cost of the ledger: the test that spent it and how it is known."""

    cost_event_id: str
    """The ledger entry's id."""
    campaign_id: str
    """The campaign the test belongs to."""
    run_id: str | None
    operation_id: str
    """The test's operation id within the campaign."""
    connector_ref: str
    """The connector tested."""
    amount_usd: Decimal
    cost_measurement: CostMeasurement
    """How the cost is known: measured, estimated or not at all."""
    created_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True)
class ConnectorCostReport:
    """A scope's totals and a page of its ledger, oldest entry first."""

    campaign_id: str
    """The campaign the totals are of."""
    run_id: str | None
    committed_usd: Decimal
    reserved_usd: Decimal
    entries: tuple[ConnectorCostEntry, ...]
    """One page of the ledger, oldest entry first."""
    next_cursor: str | None = None


__all__ = [
    "REF_PATTERN",
    "BackendType",
    "CleanupStatus",
    "Connector",
    "ConnectorCostEntry",
    "ConnectorCostReport",
    "ConnectorCreateRequest",
    "ConnectorListResponse",
    "ConnectorRef",
    "ConnectorScope",
    "ConnectorSource",
    "ConnectorSummaryResponse",
    "ConnectorTest",
    "ConnectorTestRequest",
    "ConnectorTestResponse",
    "ConnectorUpdateRequest",
    "CostScope",
    "PositiveUsd",
    "TestId",
    "TrialState",
    "UsdInput",
    "usd_amount",
]
