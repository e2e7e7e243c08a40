"""AttestationRepository: the kit's suite on memory and PostgreSQL, and racing submissions."""

import threading

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.attestations.model import AttestationSubmission
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.conformance.attestations import (
    AttestationRepositoryConformance,
    AttestationSequenceProperties,
)
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.contract

RACERS = 12


class TestAttestationRepository(OnEveryStore, AttestationRepositoryConformance):
    pass


@pytest.mark.spec("§2.4 attestation-first-write-wins", "§2.4 attestation-expiry")
class TestAttestationSequences(OnEveryStoreEachExample, AttestationSequenceProperties):
    pass


@pytest.mark.spec("§2.4 attestation-first-write-wins")
def test_racing_submissions_on_postgres_leave_exactly_one_authoritative(postgres_store):
    """Threads submit distinct attestations of one correlation at once: one wins, all agree."""
    ecp = Ecp.build(
        postgres_store.unit_of_work, signer=Ed25519Signer.generate(), clock=FixedClock(NOW)
    )
    start = threading.Barrier(RACERS)
    acks = [None] * RACERS

    def submit(number: int) -> None:
        submission = AttestationSubmission(
            correlation_id="race",
            deployment_ref="dep",
            graph_version="g@1",
            adapter_version=f"adapter/{number}",
            inventory_fingerprint="fp",
            claimed_level="L2",
        )
        start.wait(10)
        acks[number] = ecp.attestations.submit("acme", submission)

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert all(ack is not None for ack in acks)
    assert sum(ack.authoritative for ack in acks) == 1
    assert sorted(ack.status for ack in acks) == ["accepted"] + ["conflict"] * (RACERS - 1)
    assert len({ack.digest for ack in acks}) == 1
    assert len({ack.expires_at for ack in acks}) == 1
    with postgres_store.unit_of_work() as tx:
        stored = tx.attestations.history("acme", "race")
    assert len(stored) == 1
    assert stored[0].digest == acks[0].digest
    winner = next(n for n, ack in enumerate(acks) if ack.authoritative)
    assert stored[0].adapter_version == f"adapter/{winner}"
