"""Attestations in the core: first write wins, expiry, digests, signatures and mismatches."""

from datetime import timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.attestations.model import (
    ATTESTATION_TTL,
    ATTESTED_FIELDS,
    EXPIRED,
    AttestationSubmission,
)
from ecp_core.attestations.rules import PRESENTED_DIGEST, digest_holds, issue, verify
from ecp_core.errors import NotFound
from ecp_core.memory import MemoryStore
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer, KeyRing
from ecp_core.system import FixedClock
from ecp_core.testing.samples import NOW

pytestmark = pytest.mark.unit

SIGNER = Ed25519Signer(bytes(range(32)), "key-1")
TTL_SECONDS = ATTESTATION_TTL.total_seconds()


def submission(**changes: str) -> AttestationSubmission:
    fields = {
        "correlation_id": "corr-1",
        "deployment_ref": "dep",
        "graph_version": "g@3",
        "adapter_version": "adapter/1",
        "inventory_fingerprint": "fp",
        "claimed_level": "L2",
    }
    return AttestationSubmission(**{**fields, **changes})


def world(signer: Ed25519Signer | None = SIGNER) -> tuple[Ecp, FixedClock, MemoryStore]:
    clock, store = FixedClock(NOW), MemoryStore()
    return Ecp.build(store.unit_of_work, signer=signer, clock=clock), clock, store


# -- first write wins --------------------------------------------------------------------------


@pytest.mark.spec("§2.4 attestation-first-write-wins")
def test_the_server_times_hashes_and_signs_what_the_client_sent():
    """issued_at is the server's clock, expires_at 15 minutes later; the digest is signed."""
    ecp, _, _ = world()
    ack = ecp.attestations.submit("acme", submission())
    stored = ecp.attestations.get("acme", "corr-1")
    assert stored.issued_at == NOW
    assert stored.expires_at == NOW + timedelta(minutes=15) == ack.expires_at
    assert stored.digest == ack.digest
    assert stored.digest.startswith("sha256:")
    assert stored.signing_key_id == "key-1"
    assert KeyRing.of([SIGNER]).verify_text("key-1", stored.digest, stored.signature)


@pytest.mark.spec("§2.4 attestation-first-write-wins", "§5 tenant-isolation")
def test_tenants_hold_the_same_correlation_independently():
    """Another tenant's correlation is not found, and its own submission is authoritative."""
    ecp, _, _ = world()
    ecp.attestations.submit("acme", submission())
    with pytest.raises(NotFound):
        ecp.attestations.verify("globex", "corr-1", {})
    theirs = ecp.attestations.submit("globex", submission(claimed_level="L9"))
    assert theirs.authoritative
    assert theirs.status == "accepted"
    assert ecp.attestations.get("acme", "corr-1").claimed_level == "L2"


# -- expiry ------------------------------------------------------------------------------------


@pytest.mark.spec("§2.4 attestation-expiry")
def test_expiry_frees_the_correlation_and_keeps_history():
    """Until the 15 minutes end a different submission conflicts; at that instant it wins."""
    ecp, clock, _ = world()
    first = ecp.attestations.submit("acme", submission())
    clock.advance(TTL_SECONDS - 0.000001)
    assert ecp.attestations.submit("acme", submission(claimed_level="L3")).status == "conflict"
    clock.advance(0.000001)
    second = ecp.attestations.submit("acme", submission(claimed_level="L3"))
    assert (second.status, second.authoritative) == ("accepted", True)
    assert second.digest != first.digest
    history = ecp.attestations.history("acme", "corr-1")
    assert [a.claimed_level for a in history] == ["L2", "L3"]
    # The latest is what verification reads; once it expires too, ``expired`` says so.
    assert ecp.attestations.verify("acme", "corr-1", {}).verified
    clock.advance(TTL_SECONDS)
    expired = ecp.attestations.verify("acme", "corr-1", {"claimed_level": "L3"})
    assert expired.mismatches == (EXPIRED,)
    assert not expired.verified
    assert expired.digest_verified
    assert expired.signature_verified
    assert ecp.attestations.read("acme", "corr-1").in_force is False


@pytest.mark.spec("§2.4 attestation-expiry")
def test_an_exact_replay_after_expiry_is_a_new_attestation():
    """Replaying the same six fields after expiry issues a fresh one with new times and digest."""
    ecp, clock, _ = world()
    first = ecp.attestations.submit("acme", submission())
    clock.advance(TTL_SECONDS)
    again = ecp.attestations.submit("acme", submission())
    assert again.status == "accepted"
    assert again.expires_at == first.expires_at + ATTESTATION_TTL
    assert again.digest != first.digest


# -- verification ------------------------------------------------------------------------------


@pytest.mark.spec("§2.4 attestation-verification")
@pytest.mark.parametrize("field", [*ATTESTED_FIELDS, PRESENTED_DIGEST])
def test_each_presented_field_that_differs_is_named(field):
    """A copy differing in one field names exactly that field; the same copy verifies."""
    ecp, _, _ = world()
    ack = ecp.attestations.submit("acme", submission())
    copy = {name: getattr(submission(), name) for name in ATTESTED_FIELDS}
    copy[PRESENTED_DIGEST] = ack.digest
    assert ecp.attestations.verify("acme", "corr-1", copy).verified
    changed = ecp.attestations.verify("acme", "corr-1", {**copy, field: copy[field] + "x"})
    assert changed.mismatches == (field,)
    assert not changed.verified
    assert changed.digest_verified
    assert changed.signature_verified


@pytest.mark.spec("§2.4 attestation-verification")
def test_every_differing_field_is_listed_in_order_and_absent_ones_are_not_compared():
    """Mismatches follow the field order; a field left out is never a mismatch."""
    ecp, _, _ = world()
    ecp.attestations.submit("acme", submission())
    wrong = dict.fromkeys((*ATTESTED_FIELDS, PRESENTED_DIGEST), "wrong")
    found = ecp.attestations.verify("acme", "corr-1", wrong)
    assert found.mismatches == (*ATTESTED_FIELDS, PRESENTED_DIGEST)
    only = ecp.attestations.verify("acme", "corr-1", {"graph_version": None, "claimed_level": "L2"})
    assert only.mismatches == ()
    assert only.verified


PRINTABLE = st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), max_size=20)


@pytest.mark.spec("§2.4 attestation-verification")
@given(
    fields=st.fixed_dictionaries(dict.fromkeys(ATTESTED_FIELDS[1:], PRINTABLE)),
    target=st.sampled_from(["tenant_id", *ATTESTED_FIELDS, "issued_at", "expires_at"]),
)
def test_changing_any_stored_field_breaks_the_digest(fields, target):
    """Every attested field, the tenant and both times are under the digest."""
    made = issue(
        "acme",
        AttestationSubmission(correlation_id="c", **{**fields, "deployment_ref": "d"}),
        NOW,
        SIGNER,
    )
    assert digest_holds(made)
    value = getattr(made, target)
    changed = value + timedelta(microseconds=1) if target.endswith("_at") else value + "~"
    tampered = attrs.evolve(made, **{target: changed})
    assert not digest_holds(tampered)
    report = verify(tampered, {}, KeyRing.of([SIGNER]), NOW)
    assert not report.verified
    assert report.signature_verified  # the signature still covers the stored digest


@pytest.mark.spec("§2.4 attestation-verification")
def test_a_signature_verifies_under_a_retired_key_after_rotation():
    """Signed with key 1; the service restarted on key 2 with key 1 retired still verifies it."""
    store, clock = MemoryStore(), FixedClock(NOW)
    Ecp.build(store.unit_of_work, signer=SIGNER, clock=clock).attestations.submit(
        "acme", submission()
    )
    key_2 = Ed25519Signer.generate("key-2")
    rotated = Ecp.build(
        store.unit_of_work, signer=key_2, clock=clock, verification_keys=[SIGNER.published()]
    )
    report = rotated.attestations.verify("acme", "corr-1", {})
    assert (report.verified, report.signature_verified, report.signing_key_id) == (
        True,
        True,
        "key-1",
    )
    forgotten = Ecp.build(store.unit_of_work, signer=key_2, clock=clock)
    lost = forgotten.attestations.verify("acme", "corr-1", {})
    assert (lost.verified, lost.digest_verified, lost.signature_verified) == (False, True, False)


@pytest.mark.spec("§2.4 attestation-verification")
def test_without_a_signer_rows_are_unsigned_and_signature_verified_is_null():
    """An embedder without a signer stores unsigned rows: null signature axis, still verified."""
    ecp, _, _ = world(signer=None)
    ecp.attestations.submit("acme", submission())
    stored = ecp.attestations.get("acme", "corr-1")
    assert (stored.signature, stored.signing_key_id) == (None, None)
    report = ecp.attestations.verify("acme", "corr-1", {"claimed_level": "L2"})
    assert (report.verified, report.digest_verified, report.signature_verified) == (
        True,
        True,
        None,
    )
