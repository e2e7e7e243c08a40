"""AttestationRepository on the adapter under test: first write wins, expiry, history, reads."""

import itertools
from datetime import timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ecp_core.attestations.model import ATTESTATION_TTL, Attestation, AttestationSubmission
from ecp_core.attestations.rules import issue
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW

SIGNER = Ed25519Signer(bytes(range(32)), "attest-1")
"""A fixed key: equal arguments make equal (signed) samples."""


def attestation(
    correlation: str = "corr-1",
    *,
    tenant: str = "t1",
    deployment: str = "dep",
    level: str = "L2",
    minutes: float = 0,
    signed: bool = True,
) -> Attestation:
    """An attestation issued ``minutes`` after :data:`NOW` (unsigned legacy with ``signed``)."""
    at = NOW + timedelta(minutes=minutes)
    submission = _submission(level, correlation, deployment)
    return issue(tenant, submission, at, SIGNER if signed else None)


def _submission(
    level: str, correlation: str = "corr-1", deployment: str = "dep"
) -> AttestationSubmission:
    return AttestationSubmission(
        correlation_id=correlation,
        deployment_ref=deployment,
        graph_version="g@3",
        adapter_version="adapter/1.4 é",
        inventory_fingerprint="sha256:" + "ab" * 32,
        claimed_level=level,
    )


class AttestationRepositoryConformance(StoreSuite):
    """Attestations: one in force per (tenant, correlation), history kept, deployment reads."""

    def test_the_first_is_stored_with_every_field_and_scoped_by_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The first attestation of a correlation is stored whole; tenants never see another's."""
        signed, legacy = attestation(), attestation("corr-2", signed=False)
        with uow() as tx:
            assert tx.attestations.insert_first(signed) == (signed, True)
            assert tx.attestations.insert_first(legacy) == (legacy, True)
            tx.commit()
        with uow() as tx:
            assert tx.attestations.get("t1", "corr-1") == signed
            assert tx.attestations.get("t1", "corr-2") == legacy
            assert tx.attestations.get("t2", "corr-1") is None
            assert tx.attestations.get("t1", "nope") is None
            assert tx.attestations.history("t2", "corr-1") == []

    def test_while_one_is_in_force_a_later_one_is_not_stored(self, uow: UnitOfWorkFactory) -> None:
        """Any attestation issued before the one in force expires is refused; the first answers."""
        first = attestation()
        with uow() as tx:
            tx.attestations.insert_first(first)
            tx.commit()
        for later in (
            attestation(),  # the very same attestation again: equal, yet not stored twice
            attestation(level="L3", minutes=1),
            attestation(minutes=14.99),
            attestation(level="L9", minutes=-1),
        ):
            with uow() as tx:
                assert tx.attestations.insert_first(later) == (first, False)
                tx.commit()
        with uow() as tx:
            assert tx.attestations.history("t1", "corr-1") == [first]

    def test_another_tenant_or_correlation_is_independent(self, uow: UnitOfWorkFactory) -> None:
        """The same correlation id in another tenant, or another id, is a correlation of its own."""
        mine, theirs, other = attestation(), attestation(tenant="t2"), attestation("corr-2")
        with uow() as tx:
            for each in (mine, theirs, other):
                assert tx.attestations.insert_first(each) == (each, True)
            tx.commit()
        with uow() as tx:
            assert tx.attestations.get("t2", "corr-1") == theirs
            assert tx.attestations.get("t1", "corr-1") == mine

    def test_after_expiry_the_next_takes_its_place_and_history_stays(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Expiry is exclusive: one issued at the instant the first expires is the next in force."""
        minutes = ATTESTATION_TTL / timedelta(minutes=1)
        first = attestation()
        second = attestation(level="L3", minutes=minutes)
        third = attestation(level="L4", minutes=2 * minutes + 5)
        with uow() as tx:
            for each in (first, second, third):
                assert tx.attestations.insert_first(each) == (each, True)
            tx.commit()
        with uow() as tx:
            assert tx.attestations.get("t1", "corr-1") == third
            assert tx.attestations.history("t1", "corr-1") == [first, second, third]

    def test_an_uncommitted_insert_is_rolled_back(self, uow: UnitOfWorkFactory) -> None:
        """Leaving without commit leaves the correlation free."""
        with uow() as tx:
            tx.attestations.insert_first(attestation())
        later = attestation(level="L3", minutes=1)
        with uow() as tx:
            assert tx.attestations.insert_first(later) == (later, True)
            tx.commit()
        with uow() as tx:
            assert tx.attestations.history("t1", "corr-1") == [later]

    def test_current_for_deployment_is_the_latest_in_force(self, uow: UnitOfWorkFactory) -> None:
        """The deployment's latest unexpired attestation by issued_at, then correlation id."""
        old = attestation("a-old", minutes=-20)
        early = attestation("b-early", minutes=0)
        late = attestation("a-late", minutes=3)
        tie = attestation("z-tie", minutes=3)
        elsewhere = attestation("c", deployment="other", minutes=5)
        foreign = attestation("d", tenant="t2", minutes=6)
        with uow() as tx:
            for each in (old, early, late, tie, elsewhere, foreign):
                tx.attestations.insert_first(each)
            tx.commit()
        at = NOW + timedelta(minutes=4)
        with uow() as tx:
            assert tx.attestations.current_for_deployment("t1", "dep", at) == tie
            assert tx.attestations.current_for_deployment("t1", "other", at) == elsewhere
            assert tx.attestations.current_for_deployment("t2", "dep", at) == foreign
            assert tx.attestations.current_for_deployment("t1", "nope", at) is None
            after_early = NOW + ATTESTATION_TTL
            assert tx.attestations.current_for_deployment("t1", "dep", after_early) == tie
            gone = NOW + ATTESTATION_TTL + timedelta(minutes=3)
            assert tx.attestations.current_for_deployment("t1", "dep", gone) is None


_examples = itertools.count()
_TTL_SECONDS = int(ATTESTATION_TTL.total_seconds())

STEPS = st.lists(
    st.tuples(
        st.sampled_from(["L1", "L2", "L3"]),
        st.integers(min_value=0, max_value=_TTL_SECONDS * 3 // 2) | st.just(_TTL_SECONDS),
    ),
    min_size=1,
    max_size=12,
)
"""Submissions as (claimed level, seconds waited before it)."""


class AttestationSequenceProperties(ExampleStoreSuite):
    """Any sequence of submissions against a reference model of first write wins with expiry."""

    @settings(
        max_examples=200 if THOROUGH else 25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(steps=STEPS)
    @example(steps=[("L1", 0), ("L1", 0)])  # the same submission twice in one microsecond
    @example(steps=[("L1", 0), ("L2", _TTL_SECONDS), ("L2", 0)])  # expiry is exclusive
    def test_the_one_in_force_is_the_first_unexpired_and_acks_are_authoritative_iff_equal(
        self, open_store: StoreOpener, steps: list[tuple[str, int]]
    ) -> None:
        """The first submission after expiry (or ever) holds; acks are authoritative iff equal."""
        tenant = f"p{next(_examples):05d}"  # a new tenant per example: the store may be reused
        clock = FixedClock(NOW)
        with open_store() as uow:
            ecp = Ecp.build(uow, signer=SIGNER, clock=clock)
            level_in_force, expires_at, accepted = "", NOW, 0
            for level, wait in steps:
                now = clock.advance(wait)
                ack = ecp.attestations.submit(tenant, _submission(level))
                if accepted == 0 or now >= expires_at:
                    level_in_force, expires_at, expected = level, now + ATTESTATION_TTL, "accepted"
                    accepted += 1
                else:
                    expected = "replayed" if level == level_in_force else "conflict"
                assert ack.status == expected
                assert ack.authoritative is (level == level_in_force)
                assert ack.expires_at == expires_at
                current = ecp.attestations.get(tenant, "corr-1")
                assert (ack.digest, current.claimed_level) == (current.digest, level_in_force)
            assert len(ecp.attestations.history(tenant, "corr-1")) == accepted


__all__ = [
    "SIGNER",
    "STEPS",
    "AttestationRepositoryConformance",
    "AttestationSequenceProperties",
    "attestation",
]
