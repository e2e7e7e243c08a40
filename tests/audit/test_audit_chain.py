"""Properties of the audit chain: tamper evidence, erasure, signatures, legacy records."""

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ecp_core.audit import (
    PII_FIELDS,
    ChainHead,
    Ed25519Signer,
    KeyRing,
    crypto_erase,
    seal,
    verify_chain,
)
from ecp_core.audit.chain import compute_digest
from ecp_core.errors import AuditRecordNotErasable
from ecp_core.testing.strategies.audit import SIGNER, START, build_chain, personal_data
from ecp_core.testing.strategies.text import json_values
from ecp_core.types import AttemptStatus

pytestmark = pytest.mark.unit

RING = KeyRing.of([SIGNER])
chains = st.lists(personal_data, min_size=1, max_size=6)


def verify(records, head, ring=RING):
    return verify_chain(records, ring, scope="run:run-1", head=head)


@pytest.mark.spec("C4 chain-per-run", "§2.3 audit-verification")
@given(chains)
def test_an_untouched_chain_verifies(contents):
    records, head = build_chain(contents)
    result = verify(records, head)
    assert result.verified, result.error
    assert result.signature_verified is True
    assert result.record_count == len(records)
    assert result.unsigned_record_count == 0
    assert result.failed_audit_id is None
    assert result.signing_key_id == "test-key"


ENVELOPE_CHANGES = {
    "node_id": "other-node",
    "status": AttemptStatus.FAILED,
    "run_id": "run-2",
    "tenant_id": "t2",
    "deployment_ref": "dep-2",
    "graph_version_ref": "g@2",
    "created_at": START.replace(year=2030),
    "audit_id": "forged",
}


@pytest.mark.spec("C4 chain-per-run")
@given(chains, st.data())
def test_changing_a_hashed_envelope_field_fails_at_that_record(contents, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records) - 1))
    field = data.draw(st.sampled_from(sorted(ENVELOPE_CHANGES)))
    records[index] = attrs.evolve(records[index], **{field: ENVELOPE_CHANGES[field]})
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[index].audit_id


@pytest.mark.spec("C4 chain-per-run", "§9.1 pii-commitments")
@given(chains, st.data())
def test_changing_personal_data_fails_at_that_record(contents, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records) - 1))
    field = data.draw(st.sampled_from(PII_FIELDS))
    value = data.draw(json_values if field not in ("stdout", "stderr") else st.text(max_size=10))
    assume(value != getattr(records[index], field))
    records[index] = attrs.evolve(records[index], **{field: value})
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[index].audit_id


@pytest.mark.spec("C4 chain-per-run")
@given(chains, st.data())
def test_changing_digests_or_commitments_fails_at_that_record(contents, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records) - 1))
    record = records[index]
    field = data.draw(st.sampled_from(PII_FIELDS))
    flips = [
        {"record_digest": "sha256:" + "0" * 64},
        {"previous_record_digest": "sha256:" + "1" * 64},
        {"pii_commitments": {**record.pii_commitments, field: "sha256:" + "2" * 64}},
        {"attempt": record.attempt + 1},
        {"digest_version": 1},
    ]
    change = data.draw(st.sampled_from(flips))
    records[index] = attrs.evolve(record, **change)
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[index].audit_id


@pytest.mark.spec("C4 chain-per-run")
@given(chains, st.data())
def test_deleting_a_record_fails_where_it_stood(contents, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records) - 1))
    del records[index]
    result = verify(records, head)
    assert not result.verified
    expected = (
        records[index].audit_id
        if index < len(records)
        else (records[-1].audit_id if records else None)
    )
    assert result.failed_audit_id == expected


@pytest.mark.spec("C4 chain-per-run")
@given(chains, personal_data, st.data())
def test_inserting_a_forged_record_fails_at_the_insertion(contents, forged_content, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records)))
    forged = seal(
        previous_record_digest=records[index - 1].record_digest if index else None,
        signer=SIGNER,
        created_at=START,
        audit_id="forged",
        run_id="run-1",
        tenant_id="t1",
        deployment_ref="dep",
        graph_version_ref="g@1",
        node_id="node-x",
        attempt=index + 1,
        status=AttemptStatus.SUCCEEDED,
        **forged_content,
    )
    records.insert(index, forged)
    result = verify(records, head)
    assert not result.verified
    # A well-forged record links correctly; the break shows at the record after it (or the head).
    following = records[index + 1].audit_id if index + 1 < len(records) else "forged"
    assert result.failed_audit_id == following


@pytest.mark.spec("C4 chain-per-run")
@given(st.lists(personal_data, min_size=2, max_size=6), st.data())
def test_reordering_records_fails_at_the_first_moved_one(contents, data):
    records, head = build_chain(contents)
    i = data.draw(st.integers(0, len(records) - 2))
    j = data.draw(st.integers(i + 1, len(records) - 1))
    records[i], records[j] = records[j], records[i]
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[i].audit_id


@pytest.mark.spec("§3.2 crypto-erase-v2", "§9.1 pii-commitments")
@given(chains, st.data())
def test_erasing_any_subset_keeps_the_chain_verified(contents, data):
    records, head = build_chain(contents)
    chosen = data.draw(st.sets(st.integers(0, len(records) - 1)))
    erased = [
        crypto_erase(r, "subject request", START) if i in chosen else r
        for i, r in enumerate(records)
    ]
    result = verify(erased, head)
    assert result.verified, result.error
    assert result.signature_verified is True
    assert result.record_count == len(records)
    for i in chosen:
        record, original = erased[i], records[i]
        assert (
            record.erased
            and record.erased_at == START
            and record.erasure_reason == "subject request"
        )
        assert all(getattr(record, field) is None for field in PII_FIELDS)
        kept = (
            "audit_id",
            "created_at",
            "record_digest",
            "previous_record_digest",
            "pii_commitments",
            "signature",
        )
        assert all(getattr(record, name) == getattr(original, name) for name in kept)


@pytest.mark.spec("§3.2 crypto-erase-v2")
@given(chains, st.data())
def test_an_erased_record_that_regains_data_fails(contents, data):
    records, head = build_chain(contents)
    index = data.draw(st.integers(0, len(records) - 1))
    records[index] = attrs.evolve(crypto_erase(records[index], "r", START), stdout="back again")
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[index].audit_id


@pytest.mark.spec("§3.2 crypto-erase-v2")
def test_erasing_twice_changes_nothing():
    records, _ = build_chain([{"stdout": "x"}])
    once = crypto_erase(records[0], "first", START)
    assert crypto_erase(once, "second", START.replace(year=2031)) is once


@pytest.mark.spec("C4 ed25519-signatures", "§2.3 audit-verification")
@given(chains)
def test_a_wrong_key_fails_the_signature_axis_only(contents):
    records, head = build_chain(contents)
    impostor = Ed25519Signer(bytes(32), key_id="test-key")
    result = verify(records, head, KeyRing.of([impostor]))
    assert result.verified
    assert result.signature_verified is False
    assert result.failed_audit_id == records[0].audit_id


@pytest.mark.spec("C4 ed25519-signatures")
def test_an_unknown_key_id_fails_the_signature_axis():
    records, head = build_chain([{}, {}])
    assert verify(records, head, KeyRing()).signature_verified is False


@pytest.mark.spec("C4 ed25519-signatures")
def test_a_tampered_signature_fails_at_that_record():
    records, head = build_chain([{}, {}, {}])
    other = SIGNER.sign_text("sha256:" + "0" * 64)
    records[1] = attrs.evolve(records[1], signature=other)
    result = verify(records, head)
    assert result.verified
    assert result.signature_verified is False
    assert result.failed_audit_id == records[1].audit_id


@pytest.mark.spec("§2.3 audit-verification")
@given(chains)
def test_unsigned_records_leave_the_signature_axis_null(contents):
    records, head = build_chain(contents, signer=None)
    result = verify(records, head)
    assert result.verified
    assert result.signature_verified is None
    assert result.unsigned_record_count == len(records)


@pytest.mark.spec("C4 chain-per-run")
def test_an_empty_chain_verifies_with_no_head():
    result = verify([], None)
    assert result.verified and result.record_count == 0 and result.signature_verified is None


@pytest.mark.spec("C4 chain-per-run")
def test_a_head_ahead_of_the_records_fails():
    records, _ = build_chain([{}, {}])
    result = verify(
        records, ChainHead(run_id="run-1", attempt=3, record_digest="sha256:" + "3" * 64)
    )
    assert not result.verified
    assert result.failed_audit_id == records[-1].audit_id


@pytest.mark.spec("§3.2 crypto-erase-v1-refused", "§9 digest-versions")
@given(chains)
def test_legacy_records_verify_but_cannot_be_erased(contents):
    records, head = build_chain(contents, digest_version=1)
    assert all(record.pii_commitments is None for record in records)
    assert verify(records, head).verified
    with pytest.raises(AuditRecordNotErasable):
        crypto_erase(records[0], "r", START)


@pytest.mark.spec("§9 digest-versions")
def test_legacy_records_hash_personal_data_in_plaintext():
    records, head = build_chain([{"stdout": "secret"}], digest_version=1)
    records[0] = attrs.evolve(records[0], stdout="changed")
    assert not verify(records, head).verified


@pytest.mark.spec("C4 ed25519-signatures")
def test_stripping_signatures_from_the_tail_fails_the_signature_axis():
    records, head = build_chain([{}, {}, {}])
    records[2] = attrs.evolve(records[2], signature=None, signing_key_id=None)
    result = verify(records, head)
    assert result.verified
    assert result.signature_verified is False
    assert result.failed_audit_id == records[2].audit_id
    assert result.error == "unsigned record after signed ones"


@pytest.mark.spec("§2.3 audit-verification")
def test_unsigned_legacy_records_before_signed_ones_are_counted_not_failed():
    records, head = build_chain([{}, {}, {}])
    records[0] = attrs.evolve(records[0], signature=None, signing_key_id=None)
    result = verify(records, head)
    assert (result.verified, result.signature_verified, result.unsigned_record_count) == (
        True,
        True,
        1,
    )


@pytest.mark.spec("§9.1 pii-commitments")
def test_personal_data_that_is_not_canonical_fails_verification_instead_of_raising():
    records, head = build_chain([{}, {}])
    records[1] = attrs.evolve(records[1], input_snapshot={"n": 2**60})
    result = verify(records, head)
    assert not result.verified
    assert result.failed_audit_id == records[1].audit_id


@pytest.mark.spec("§9 digest-versions")
def test_legacy_records_carry_no_commitments():
    records, head = build_chain([{}], digest_version=1)
    records[0] = attrs.evolve(records[0], pii_commitments={"stdout": "sha256:" + "0" * 64})
    assert not verify(records, head).verified


@pytest.mark.spec("§3.2 crypto-erase-v2")
def test_an_erasure_must_null_personal_data():
    from ecp_core.audit.erasure import check_erasure
    from ecp_core.errors import Conflict

    records, _ = build_chain([{"stdout": "secret"}])
    erased = crypto_erase(records[0], "r", START)
    check_erasure(records[0], erased)
    for forged in (attrs.evolve(erased, stdout="other"), attrs.evolve(erased, erased=False)):
        with pytest.raises(Conflict):
            check_erasure(records[0], forged)


@pytest.mark.spec("C1 wire-values")
def test_records_need_utc_timestamps():
    from datetime import timedelta, timezone

    with pytest.raises(ValueError, match="UTC"):
        build_chain([{}])[0][0].__class__(
            **{
                **attrs.asdict(build_chain([{}])[0][0], recurse=False),
                "created_at": START.astimezone(timezone(timedelta(hours=2))),
            }
        )


@given(personal_data, st.sampled_from([1, 2]))
def test_a_sealed_record_is_the_record_its_digest_recomputes_from(content, version):
    """seal builds the record once from the values it hashes: recomputing from the built record
    gives its digest, and its signature is of that digest."""
    (record,), _ = build_chain([content], digest_version=version)
    assert compute_digest(record) == record.record_digest
    assert RING.verify_text(record.signing_key_id, record.record_digest, record.signature)


def test_sealing_without_an_envelope_field_names_it():
    with pytest.raises(TypeError, match="node_id"):
        seal(
            previous_record_digest=None,
            signer=None,
            created_at=START,
            audit_id="a-1",
            run_id="r-1",
            tenant_id="t1",
            deployment_ref="dep",
            graph_version_ref="g@1",
            attempt=1,
            status=AttemptStatus.SUCCEEDED,
        )
