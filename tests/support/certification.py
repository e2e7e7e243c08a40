"""A world for certification tests: the real services on a memory store, with a manual clock.

A deployed graph ``pay@1`` as ``refunds`` (with a policy and an attestation) and as ``other``
(with neither), and one certification of a build running as ``deployment_ref``.
"""

from datetime import UTC, datetime

import attrs

from ecp_core import ActorIdentity, AuthMethod, CreateDeploymentRequest, Ecp, ServiceRole
from ecp_core.attestations.model import AttestationSubmission
from ecp_core.audit.stored import kept_texts
from ecp_core.certification.model import CertificationState, CreateCertificationRequest
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.policies.model import DeploymentPolicyRequest
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds

S = CertificationState

DRAWN = {
    (S.BUILDABLE, S.TEST_DEPLOYABLE): "test_deployable",
    (S.TEST_DEPLOYABLE, S.CERTIFIED): "production_ready",
    (S.CERTIFIED, S.PROMOTED): "production_ready",
    (S.BUILDABLE, S.REVOKED): "nothing",
    (S.TEST_DEPLOYABLE, S.REVOKED): "nothing",
    (S.CERTIFIED, S.REVOKED): "nothing",
    (S.PROMOTED, S.REVOKED): "nothing",
}
"""The transition table as the ADR and docs/certification.md draw it, written out by hand:
(from, to) → what the move needs; every pair not here is refused."""

ADMIN = ActorIdentity(
    subject="admin@acme",
    auth_method=AuthMethod.BEARER,
    roles=(ServiceRole.ADMIN,),
    tenant_id="acme",
)


class World:
    """An Ecp on a memory store with a deployed graph, a policy and a matching attestation."""

    def __init__(
        self, *, signer: bool = True, attested: str = "pay@1", deployment_ref: str = "refunds"
    ) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(datetime(2026, 11, 22, 5, 0, tzinfo=UTC))
        self.ecp = Ecp.build(
            self.store.unit_of_work,
            signer=Ed25519Signer.generate() if signer else None,
            clock=self.clock,
            ids=SequentialIds("w"),
        )
        definition = (
            GraphBuilder("pay").action("charge", "echo").end("done").chain("charge", "done").build()
        )
        self.ecp.graphs.register("acme", definition)
        for ref in ("refunds", "other"):
            self.ecp.graphs.deploy(
                "acme", CreateDeploymentRequest(deployment_ref=ref, graph_id="pay")
            )
        self.ecp.graphs.put_policy("acme", "refunds", DeploymentPolicyRequest())
        self.attest(attested)
        answer, _ = self.ecp.certifications.create(
            ADMIN,
            CreateCertificationRequest(
                app_name="shop",
                app_commit="abc",
                image_digest="sha256:" + "c" * 64,
                deployment_ref=deployment_ref,
            ),
        )
        self.certification_id = answer.certification_id

    def attest(self, graph_version: str, correlation: str = "c-1") -> None:
        self.ecp.attestations.submit(
            "acme",
            AttestationSubmission(
                correlation_id=correlation,
                deployment_ref="refunds",
                graph_version=graph_version,
                adapter_version="1",
                inventory_fingerprint="inv",
                claimed_level="l1",
            ),
        )

    def run(self, ref: str = "refunds") -> str:
        run, _ = self.ecp.runs.start("acme", StartRunRequest(deployment_ref=ref, input={"n": 1}))
        self.ecp.runs.drive("acme", run.run_id)
        return run.run_id

    def codes(self) -> list[str]:
        evaluation = self.ecp.certifications.get("acme", self.certification_id).evaluation
        return [b.code for b in evaluation.blockers]

    def tamper(self, run_id: str) -> None:
        """Change the output of the run's first audit record in place (the digest stays)."""
        records = self.store.tables.table("audit")
        audit_id, record = next((k, r) for k, r in records.items() if r.run_id == run_id)
        records[audit_id] = attrs.evolve(record, output_snapshot={"n": 2})
        texts = self.store.tables.table("audit_texts")  # the row's kept texts change with it
        texts[audit_id] = kept_texts(records[audit_id])
