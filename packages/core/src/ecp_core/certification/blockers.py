"""Blockers and evaluation: pure functions of the facts gathered about a build's deployment.

The composition root gathers :class:`CertificationFacts` (``ecp_core.certification_facts``);
everything here is a function of them, of the override and of the instant (ADR 0043).
"""

import enum
from collections import deque
from datetime import datetime

import attrs

from ecp_core.certification.model import (
    CertificationBlocker,
    CertificationEvaluation,
    CertificationOverride,
    CertificationState,
    OverrideScope,
)
from ecp_core.errors import Configurable
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.types import NodeKind, SideEffectClass

CONSEQUENTIAL = frozenset({SideEffectClass.NON_IDEMPOTENT, SideEffectClass.IRREVERSIBLE})
"""Side effects that cannot be taken back by running again: they need a person's approval."""


class BlockerCode(enum.StrEnum):
    """Every blocker, in the order an evaluation lists them."""

    DEPLOYMENT_MISSING = "deployment_missing"
    SIGNER_UNAVAILABLE = "signer_unavailable"
    AUDIT_CHAIN_BROKEN = "audit_chain_broken"
    POLICY_MISSING = "policy_missing"
    ATTESTATION_MISSING = "attestation_missing"
    UNAPPROVED_CONSEQUENTIAL_ACTION = "unapproved_consequential_action"


BLOCKER_CONFIGURATION: dict[BlockerCode, Configurable] = {
    BlockerCode.SIGNER_UNAVAILABLE: Configurable.AUDIT_SIGNING_KEY,
}
"""The configuration that lifts a blocker; an application says in its remediation how it is set."""

OVERRIDABLE = frozenset(BlockerCode(scope.value) for scope in OverrideScope)
"""The blockers an override may waive: exactly those an OverrideScope names."""


@attrs.frozen(kw_only=True)
class BrokenChain:
    """The first audited run whose chain fails verification, and why."""

    run_id: str
    error: str


@attrs.frozen(kw_only=True)
class CertificationFacts:
    """What the evaluation examines about the deployment a build runs as, at one instant.

    ``attested_graph_version`` is the graph_version of the latest attestation in force for the
    deployment (None: none in force); ``audited_runs`` how many of its recent runs were verified.
    """

    deployment_ref: str
    deployment_found: bool
    signer_available: bool
    graph_version_ref: str | None = None
    graph_version: int | None = None
    policy_found: bool = False
    attested_graph_version: str | None = None
    audited_runs: int = 0
    broken_chain: BrokenChain | None = None
    unapproved_actions: tuple[str, ...] = ()

    def attests_this_version(self) -> bool:
        """Whether the attestation in force names the deployment's graph version.

        As its graph_version_ref (``graph@3``) or as the bare version number (``3``).
        """
        attested = self.attested_graph_version
        if attested is None or self.graph_version_ref is None:
            return False
        return attested in (self.graph_version_ref, str(self.graph_version))


def unapproved_consequential_nodes(definition: GraphDefinition) -> tuple[str, ...]:
    """Nodes whose action is non-idempotent or irreversible and that no approval gates.

    A node is gated when its action ``requires_approval`` or when every path from the entry to
    it passes an approval node; the walk stops at approval nodes, so what it still reaches is not.
    """
    reached: set[str] = set()
    queue = deque([definition.entry])
    while queue:
        node_id = queue.popleft()
        if node_id in reached:
            continue
        reached.add(node_id)
        if definition.node(node_id).kind is NodeKind.APPROVAL:
            continue
        queue.extend(edge.target for edge in definition.outgoing(node_id))
    return tuple(
        node.id
        for node in definition.nodes
        if node.id in reached
        and node.action is not None
        and node.action.side_effect in CONSEQUENTIAL
        and not node.action.requires_approval
    )


def _blocker(code: BlockerCode, message: str, remediation: str) -> CertificationBlocker:
    return CertificationBlocker(
        code=code.value, message=message, remediation=remediation, overridable=code in OVERRIDABLE
    )


def blockers_of(facts: CertificationFacts) -> tuple[CertificationBlocker, ...]:
    """Every blocker the facts show, in :class:`BlockerCode` order."""
    ref = facts.deployment_ref
    found: list[CertificationBlocker] = []
    if not facts.deployment_found:
        found.append(
            _blocker(
                BlockerCode.DEPLOYMENT_MISSING,
                f"deployment {ref} does not exist",
                f"create the deployment {ref} (POST /v1/deployments)",
            )
        )
    if not facts.signer_available:
        found.append(
            _blocker(
                BlockerCode.SIGNER_UNAVAILABLE,
                "the server has no audit signing key: records and attestations go unsigned",
                "configure the audit signing key and restart",
            )
        )
    if not facts.deployment_found:
        return tuple(found)  # nothing else can be examined without the deployment
    if facts.broken_chain is not None:
        broken = facts.broken_chain
        found.append(
            _blocker(
                BlockerCode.AUDIT_CHAIN_BROKEN,
                f"the audit chain of run {broken.run_id} fails verification: {broken.error}",
                f"investigate GET /runs/{broken.run_id}/audit/verify; a broken chain is not waived",
            )
        )
    if not facts.policy_found:
        found.append(
            _blocker(
                BlockerCode.POLICY_MISSING,
                f"deployment {ref} has no policy",
                f"set one with PUT /v1/deployments/{ref}/policy",
            )
        )
    if not facts.attests_this_version():
        attested = facts.attested_graph_version
        found.append(
            _blocker(
                BlockerCode.ATTESTATION_MISSING,
                f"no attestation in force for {ref} at {facts.graph_version_ref}"
                + ("" if attested is None else f" (the one in force attests {attested})"),
                f"submit an attestation for {ref} naming graph_version {facts.graph_version_ref}"
                " (POST /v1/attestations)",
            )
        )
    if facts.unapproved_actions:
        nodes = ", ".join(facts.unapproved_actions)
        found.append(
            _blocker(
                BlockerCode.UNAPPROVED_CONSEQUENTIAL_ACTION,
                f"non-idempotent or irreversible actions run without an approval: {nodes}",
                "set requires_approval on those actions or put an approval node before them",
            )
        )
    return tuple(found)


def evaluate(
    facts: CertificationFacts,
    override: CertificationOverride | None,
    now: datetime,
    *,
    certification_id: str | None = None,
    state: CertificationState | None = None,
) -> CertificationEvaluation:
    """The evaluation at ``now``: the blockers the active override leaves, and the verdicts.

    ``production_ready`` exactly when no blocker is left; ``test_deployable`` when every one
    left is overridable. An expired override waives nothing; no override waives a
    non-overridable blocker (the override's scopes show what it waived).
    """
    active = override is not None and override.active(now)
    waived = (
        {scope.value for scope in override.scopes} if override is not None and active else set()
    )
    remaining = tuple(b for b in blockers_of(facts) if not (b.overridable and b.code in waived))
    return CertificationEvaluation(
        test_deployable=all(b.overridable for b in remaining),
        production_ready=not remaining,
        blockers=remaining,
        certification_id=certification_id,
        override_active=active,
        state=state,
    )


__all__ = [
    "BLOCKER_CONFIGURATION",
    "CONSEQUENTIAL",
    "OVERRIDABLE",
    "BlockerCode",
    "BrokenChain",
    "CertificationFacts",
    "blockers_of",
    "evaluate",
    "unapproved_consequential_nodes",
]
