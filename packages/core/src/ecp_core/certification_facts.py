"""Gathers what a certification's evaluation examines about a deployment, from every area.

Certification sits below the audit chain, the runs and the attestations in the layers, so the
reading lives here, in the composition layer: the deployment and its graph, its policy, the
attestation in force, whether the server signs, and the audit chains of its recent runs. The
blockers themselves are pure functions of the result (:mod:`ecp_core.certification.blockers`).
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from ecp_core.audit.verify import verify_run_chain
from ecp_core.certification.blockers import (
    BrokenChain,
    CertificationFacts,
    unapproved_consequential_nodes,
)
from ecp_core.ports.attestations import WithAttestations
from ecp_core.ports.audit import WithAudit
from ecp_core.ports.certification import CertificationUnit
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.policies import WithPolicies
from ecp_core.ports.runs import WithRuns
from ecp_core.signing import KeyRing, PublicSigningKey

AUDITED_RUNS = 20
"""How many of the deployment's most recent runs have their audit chain verified."""

RUN_SCAN = 200
"""How many of the tenant's most recent runs are looked through for the deployment's."""


class FactsUnit(
    CertificationUnit,
    WithDeployments,
    WithPolicies,
    WithGraphs,
    WithRuns,
    WithAudit,
    WithAttestations,
    Protocol,
):
    """The storage the facts are read from, in the certification's own unit of work."""


class DeploymentFacts:
    """Reads :class:`CertificationFacts` (a ``FactsReader`` of the certification service)."""

    def __init__(self, *, signer_available: bool, keys: Iterable[PublicSigningKey]) -> None:
        """``signer_available``: the server signs audit records; ``keys`` verify their signatures."""
        self._signer_available = signer_available
        self._ring = KeyRing.of(keys)

    def __call__(
        self, uow: FactsUnit, tenant_id: str, deployment_ref: str, now: datetime
    ) -> CertificationFacts:
        """The facts about the tenant's deployment at ``now``."""
        deployment = uow.deployments.get(tenant_id, deployment_ref)
        if deployment is None:
            return CertificationFacts(
                deployment_ref=deployment_ref,
                deployment_found=False,
                signer_available=self._signer_available,
            )
        graph = uow.graphs.get(tenant_id, deployment.graph_id, deployment.graph_version)
        attestation = uow.attestations.current_for_deployment(tenant_id, deployment_ref, now)
        audited, broken = self._audit(uow, tenant_id, deployment_ref)
        return CertificationFacts(
            deployment_ref=deployment_ref,
            deployment_found=True,
            signer_available=self._signer_available,
            graph_version_ref=deployment.graph_version_ref,
            graph_version=deployment.graph_version,
            policy_found=uow.policies.get(tenant_id, deployment_ref) is not None,
            attested_graph_version=None if attestation is None else attestation.graph_version,
            audited_runs=audited,
            broken_chain=broken,
            unapproved_actions=()
            if graph is None
            else unapproved_consequential_nodes(graph.definition),
        )

    def _audit(
        self, uow: FactsUnit, tenant_id: str, deployment_ref: str
    ) -> tuple[int, BrokenChain | None]:
        """How many recent runs were verified, and the first whose chain fails (or None).

        Bounded: the deployment's newest :data:`AUDITED_RUNS` among the tenant's newest
        :data:`RUN_SCAN` runs. Heads and records are read together in one snapshot, without
        locks (ADR 0061), so no append lands between the two readings and none waits.
        """
        recent = [
            run
            for run in uow.runs.page(tenant_id, limit=RUN_SCAN)
            if run.deployment_ref == deployment_ref
        ][:AUDITED_RUNS]
        for chain in uow.audit.chains(tenant_id, [run.run_id for run in recent]):
            result = verify_run_chain(chain, self._ring)
            if not result.verified or result.signature_verified is False:
                return len(recent), BrokenChain(
                    run_id=chain.run_id, error=result.error or "the chain does not verify"
                )
        return len(recent), None


__all__ = ["AUDITED_RUNS", "RUN_SCAN", "DeploymentFacts", "FactsUnit"]
