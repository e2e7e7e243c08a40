"""Audit readiness: can this service sign the audit trail its deployments need? (ADR 0042).

The answer combines three facts: whether signing is required (a setting), whether a signer is
available (the composition root had a key), and whether the tenant deployed consequential
actions. :func:`assess` is the rule; :class:`AuditReadiness` gathers the facts.
"""

import enum
from collections.abc import Callable, Iterable
from typing import Protocol

import attrs

from ecp_core.constraints import checked
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.pages import MAX_PAGE
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.unit import Transaction
from ecp_core.types import NodeKind, SideEffectClass

HTTP_ACTION = "http_request"

HARMLESS = frozenset({SideEffectClass.NONE, SideEffectClass.IDEMPOTENT})
"""Declared side effects that running again cannot make worse; every other class counts."""


class ReadinessUnit(Transaction, WithDeployments, WithGraphs, Protocol):
    """What readiness reads: the tenant's deployments and their graphs."""


class DeploymentMode(enum.StrEnum):
    """How the service runs: a server of its owner's, the hosted offer, or inside a program."""

    SELF_HOSTED = "self_hosted"
    HOSTED = "hosted"
    EMBEDDED = "embedded"


class ReadinessState(enum.StrEnum):
    """``ready``: records are signed. ``degraded``: unsigned, and nothing needs signatures.

    ``not_ready``: signatures are needed (by setting or by consequential actions) and no signer
    is available.
    """

    READY = "ready"
    DEGRADED = "degraded"
    NOT_READY = "not_ready"


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditReadinessResponse:
    """``GET /v1/audit/readiness`` (no extras, all required)."""

    ready: bool
    """False only when signatures are needed and no signer is available (`not_ready`)."""
    state: str
    """`ready` (signed), `degraded` (unsigned, none needed) or `not_ready`."""
    deployment_mode: str
    """How the service runs: self-hosted, hosted or embedded."""
    signing_required: bool
    """Whether signatures are needed, by setting or by consequential actions."""
    signer_available: bool
    """Whether a signing key is configured."""
    consequential_actions: bool
    """Whether a deployment has a node that may act in a way running again cannot undo."""
    message: str
    """What the state means and what to do, in words."""


def consequential(node: NodeDefinition) -> bool:
    """Whether ``node`` may act on the world in a way that running again cannot undo.

    A task node always (what a worker does is out of sight), an ``http_request`` action always
    (it reaches another system), any other action unless it declares ``none`` or ``idempotent``
    (an undeclared side effect is ``unknown``). A subgraph node does not count by itself: the
    child deployment is examined as one of the tenant's deployments.
    """
    if node.action is None:
        return False
    if node.kind is NodeKind.TASK:
        return True
    return node.kind is NodeKind.ACTION and (
        node.action.name == HTTP_ACTION or node.action.side_effect not in HARMLESS
    )


def has_consequential_actions(graphs: Iterable[GraphDefinition]) -> bool:
    """Whether any node of ``graphs`` is :func:`consequential`."""
    return any(consequential(node) for graph in graphs for node in graph.nodes)


def assess(
    *,
    signing_required: bool,
    signer_available: bool,
    consequential_actions: bool,
    deployment_mode: DeploymentMode,
) -> AuditReadinessResponse:
    """The readiness these facts make: not ready when signatures are needed and none can be made."""
    needed = signing_required or consequential_actions
    if signer_available:
        state, message = ReadinessState.READY, "Audit records and attestations are signed."
    elif needed:
        state = ReadinessState.NOT_READY
        reason = "signing is required" if signing_required else "consequential actions are deployed"
        message = f"Not ready: {reason} but no audit signing key is available."
    else:
        state = ReadinessState.DEGRADED
        message = (
            "Audit records are hash-chained but unsigned;"
            " no setting and no deployed action requires signatures."
        )
    return AuditReadinessResponse(
        ready=state is not ReadinessState.NOT_READY,
        state=state.value,
        deployment_mode=deployment_mode.value,
        signing_required=signing_required,
        signer_available=signer_available,
        consequential_actions=consequential_actions,
        message=message,
    )


class AuditReadiness:
    """Gathers the facts of :func:`assess` for one tenant."""

    def __init__(
        self,
        uow: Callable[[], ReadinessUnit],
        *,
        signer_available: bool,
        signing_required: bool,
        deployment_mode: DeploymentMode,
    ) -> None:
        """The process-wide facts; the tenant's deployments are read per call."""
        self._uow = uow
        self._signer_available = signer_available
        self._signing_required = signing_required
        self._mode = deployment_mode

    def _deployed_graphs(self, uow: ReadinessUnit, tenant_id: str) -> Iterable[GraphDefinition]:
        """The graph version bound to each of the tenant's deployments, page by page."""
        after: str | None = None
        while True:
            page = uow.deployments.page(tenant_id, limit=MAX_PAGE, after=after)
            for deployment in page:
                version = uow.graphs.get(tenant_id, deployment.graph_id, deployment.graph_version)
                if version is not None:
                    yield version.definition
            if len(page) < MAX_PAGE:
                return
            after = page[-1].deployment_ref

    def check(self, tenant_id: str) -> AuditReadinessResponse:
        """The tenant's audit readiness now."""
        with self._uow() as uow:
            found = has_consequential_actions(self._deployed_graphs(uow, tenant_id))
        return assess(
            signing_required=self._signing_required,
            signer_available=self._signer_available,
            consequential_actions=found,
            deployment_mode=self._mode,
        )


__all__ = [
    "AuditReadiness",
    "AuditReadinessResponse",
    "DeploymentMode",
    "ReadinessState",
    "ReadinessUnit",
    "assess",
    "consequential",
    "has_consequential_actions",
]
