"""Salted commitments (digest_version 3, ADR 0047): the rule, erasure, guessing, tampering.

The outsider's side is the reference verifier of docs/audit-format.md, run from the document.
"""

import copy
import json
import string
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.support.audit_doc import DOC, reference_verifier

from ecp_core.audit import (
    PII_FIELDS,
    AuditTimelineResponse,
    Ed25519Signer,
    KeyRing,
    commitment,
    crypto_erase,
    seal,
    verify_chain,
)
from ecp_core.audit.chain import hashed_bytes, hashed_form
from ecp_core.audit.salted import (
    COMMITMENT_TAG,
    SALT_BYTES,
    commitment_bytes,
    new_salt,
    salted_commitment,
)
from ecp_core.testing.strategies.audit import SIGNER, START, build_chain, personal_data
from ecp_core.types import AttemptStatus
from ecp_core.wire import unstructure

pytestmark = [pytest.mark.unit, pytest.mark.spec("§9 salted-commitments")]

RING = KeyRing.of([SIGNER])
VERIFIER = reference_verifier()
PUBLISHED = json.loads(json.dumps([unstructure(SIGNER.published())]))
STRING_FIELDS = ("stdout", "stderr")
JSON_FIELDS = tuple(field for field in PII_FIELDS if field not in STRING_FIELDS)
DOC_SALT = bytes(range(0x40, 0x60))
DOC_SIGNER = Ed25519Signer(bytes(range(32)))

short_emails = st.builds(
    "{}@{}.{}".format,
    st.text(string.ascii_lowercase + string.digits + ".", min_size=1, max_size=8),
    st.text(string.ascii_lowercase, min_size=1, max_size=8),
    st.sampled_from(["com", "org", "de", "io"]),
)
low_entropy = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-1000, 1000),
    st.sampled_from(["yes", "no", "approved", "denied"]),
    short_emails,
)
"""Values a dictionary attack enumerates: yes/no, small numbers, short e-mail addresses."""
salts = st.binary(min_size=SALT_BYTES, max_size=SALT_BYTES)


def one_record(field, value, salt, digest_version=3):
    """A sealed record whose only personal data is ``value`` in ``field``."""
    if field in STRING_FIELDS and value is not None:
        value = json.dumps(value)  # these two fields hold text
    return seal(
        previous_record_digest=None,
        signer=SIGNER,
        created_at=START,
        digest_version=digest_version,
        salt=salt if digest_version == 3 else None,
        audit_id="audit-1",
        run_id="run-1",
        tenant_id="t1",
        deployment_ref="dep",
        graph_version_ref="g@1",
        node_id="n",
        attempt=1,
        status=AttemptStatus.SUCCEEDED,
        **{field: value},
    ), value


def export(records):
    timeline = AuditTimelineResponse(deployment_ref="dep", run_id="run-1", entries=tuple(records))
    return json.loads(json.dumps(unstructure(timeline)))


def both_verify(records, head=None):
    """The core's verdict and the documented verifier's on the same records."""
    core = verify_chain(records, RING, scope="run:run-1", head=head)
    timeline = export(records)
    pinned = None if head is None else (head.attempt, head.record_digest)
    outsider = VERIFIER["verify_timeline"](timeline, PUBLISHED, pinned)
    return core, outsider


# --- the rule ----------------------------------------------------------------------------------


def test_the_byte_layout_is_tag_name_salt_value():
    layout = commitment_bytes("output_snapshot", {"category": "refund"}, DOC_SALT)
    assert layout == (
        b"ecp.audit.pii.v3\x00output_snapshot\x00" + DOC_SALT + b'{"category":"refund"}'
    )
    assert VERIFIER["SALTED_TAG"] == COMMITMENT_TAG
    assert len(new_salt()) == SALT_BYTES
    assert new_salt() != new_salt()


def test_the_documented_version_3_example_is_what_the_core_computes():
    text = DOC.read_text(encoding="utf-8")
    record = seal(
        previous_record_digest=None,
        signer=DOC_SIGNER,
        created_at=datetime(2026, 3, 1, 12, 0, tzinfo=UTC),
        digest_version=3,
        salt=DOC_SALT,
        audit_id="audit-1",
        run_id="run-1",
        tenant_id="acme",
        deployment_ref="refunds",
        graph_version_ref="refund-triage@1",
        node_id="classify",
        attempt=1,
        status=AttemptStatus.SUCCEEDED,
        input_snapshot={"order": "A-1001", "email": "ana@example.com"},
        output_snapshot={"category": "refund"},
        execution_metadata={"node_kind": "action", "step": 1},
    )
    assert record.pii_salt == DOC_SALT.hex()
    assert DOC_SALT.hex() in text
    for field in ("output_snapshot", "stdout", "stderr"):
        assert record.pii_commitments[field] in text
    assert record.record_digest in text
    assert "pii_salt" not in hashed_form(record)


@pytest.mark.spec("§9 digest-versions")
def test_a_version_2_digest_is_byte_identical_to_before_version_3():
    """The worked example's version 2 record: the digest pinned before version 3 existed."""
    record = seal(
        previous_record_digest=None,
        signer=DOC_SIGNER,
        created_at=datetime(2026, 3, 1, 12, 0, tzinfo=UTC),
        audit_id="audit-1",
        run_id="run-1",
        tenant_id="acme",
        deployment_ref="refunds",
        graph_version_ref="refund-triage@1",
        node_id="classify",
        attempt=1,
        status=AttemptStatus.SUCCEEDED,
        input_snapshot={"order": "A-1001", "email": "ana@example.com"},
        output_snapshot={"category": "refund"},
        execution_metadata={"node_kind": "action", "step": 1},
    )
    assert record.digest_version == 2
    assert record.pii_salt is None
    assert record.record_digest == (
        "sha256:7016407b28c90834183f8e86f46a27941d361e4c3638bf99a0751b499b9ce7f3"
    )
    assert record.pii_commitments["input_snapshot"] == (
        "sha256:f6657baba8dbd1b1dc6e65fceb17e1eae4ba500b72be048fb809e94dddc63ea3"
    )
    assert b"salt" not in hashed_bytes(record)


def test_seal_asks_for_a_salt_exactly_in_version_3():
    fields = {
        "audit_id": "a",
        "run_id": "r",
        "tenant_id": "t",
        "deployment_ref": "d",
        "graph_version_ref": "g@1",
        "node_id": "n",
        "attempt": 1,
        "status": AttemptStatus.SUCCEEDED,
    }
    base = {"previous_record_digest": None, "signer": None, "created_at": START, **fields}
    with pytest.raises(ValueError, match="salt"):
        seal(digest_version=3, **base)
    with pytest.raises(ValueError, match="salt"):
        seal(digest_version=2, salt=DOC_SALT, **base)
    with pytest.raises(ValueError, match="salt"):
        seal(digest_version=1, salt=DOC_SALT, **base)
    with pytest.raises(ValueError, match="32 bytes"):
        seal(digest_version=3, salt=b"short", **base)


@given(value=low_entropy, salt=salts)
def test_two_fields_holding_one_value_commit_differently(value, salt):
    commitments = {salted_commitment(field, value, salt) for field in PII_FIELDS}
    assert len(commitments) == len(PII_FIELDS)


@given(value=low_entropy, salt=salts, other=salts)
def test_two_records_holding_one_value_commit_differently(value, salt, other):
    assume(salt != other)
    assert salted_commitment("input_snapshot", value, salt) != salted_commitment(
        "input_snapshot", value, other
    )


# --- erasure and guessing -----------------------------------------------------------------------


@pytest.mark.spec("§9 salt-erasure")
@given(
    value=low_entropy,
    field=st.sampled_from(PII_FIELDS),
    salt=salts,
    guesses=st.lists(salts, min_size=1, max_size=5),
)
def test_an_erased_low_entropy_value_cannot_be_guessed_back(value, field, salt, guesses):
    record, stored_value = one_record(field, value, salt)
    stored = record.pii_commitments[field]
    # Before erasure: the value with the stored salt matches (anyone can check it).
    assert salted_commitment(field, stored_value, bytes.fromhex(record.pii_salt)) == stored
    assert VERIFIER["commit"](field, stored_value, salt) == stored
    erased = crypto_erase(record, "subject request", START + timedelta(days=1))
    assert erased.pii_salt is None
    assert erased.pii_commitments[field] == stored
    # After erasure: the value with any other salt, or the version 2 rule, never matches.
    for guess in guesses:
        assume(guess != salt)
        assert salted_commitment(field, stored_value, guess) != stored
    assert commitment(stored_value) != stored
    assert VERIFIER["commit"](field, stored_value, None) != stored
    core, outsider = both_verify([erased])
    assert core.verified and core.signature_verified, core.error
    assert outsider["verified"] and outsider["signature_verified"], outsider["error"]


@pytest.mark.spec("§9 salt-erasure")
@given(st.sampled_from([True, False]), salts)
def test_a_dictionary_attack_that_breaks_version_2_fails_on_version_3(answer, salt):
    candidates = [True, False, None, 0, 1, "yes", "no"]
    plain, _ = one_record("output_snapshot", answer, None, digest_version=2)
    salted, _ = one_record("output_snapshot", answer, salt)
    erased_v2 = crypto_erase(plain, "request", START)
    erased_v3 = crypto_erase(salted, "request", START)
    recovered = [
        v for v in candidates if commitment(v) == erased_v2.pii_commitments["output_snapshot"]
    ]
    assert recovered == [answer]  # the weakness version 3 removes
    guessed_salts = [bytes(SALT_BYTES), bytes([0xFF]) * SALT_BYTES, new_salt()]
    assume(salt not in guessed_salts)  # the attacker does not hold the destroyed salt
    target = erased_v3.pii_commitments["output_snapshot"]
    assert not [
        (v, s)
        for v in candidates
        for s in guessed_salts
        if salted_commitment("output_snapshot", v, s) == target or commitment(v) == target
    ]


@pytest.mark.spec("§9 salt-erasure", "§3.2 crypto-erase-v2")
@given(st.lists(personal_data, min_size=1, max_size=5), st.data())
def test_erasing_any_subset_of_a_version_3_chain_keeps_it_verifying(contents, data):
    records, head = build_chain(contents, digest_version=3)
    assert all(record.pii_salt is not None for record in records)
    assert len({record.pii_salt for record in records}) == len(records)
    erase = data.draw(st.sets(st.integers(0, len(records) - 1)))
    erased = [
        crypto_erase(record, "retention ttl", START) if index in erase else record
        for index, record in enumerate(records)
    ]
    for index in erase:
        assert erased[index].pii_salt is None
        kept = ("record_digest", "pii_commitments", "signature", "previous_record_digest")
        assert all(getattr(erased[index], f) == getattr(records[index], f) for f in kept)
    core, outsider = both_verify(erased, head)
    assert core.verified and core.signature_verified is True, core.error
    assert core.record_count == len(records)
    assert outsider["verified"] and outsider["signature_verified"] is True, outsider["error"]


# --- tampering -----------------------------------------------------------------------------------


def flip_hex(text, upper=False):
    if upper:
        return text.upper()
    return ("1" if text[0] == "0" else "0") + text[1:]


TAMPERS = {
    "personal data": lambda r: attrs.evolve(r, input_snapshot={"email": "eve@example.com"}),
    "salt flipped": lambda r: attrs.evolve(r, pii_salt=flip_hex(r.pii_salt)),
    "salt upper case": lambda r: attrs.evolve(r, pii_salt=flip_hex(r.pii_salt, upper=True)),
    "salt shortened": lambda r: attrs.evolve(r, pii_salt=r.pii_salt[:-2]),
    "salt dropped": lambda r: attrs.evolve(r, pii_salt=None),
    "salt kept after erasure": lambda r: attrs.evolve(
        crypto_erase(r, "x", START), pii_salt=r.pii_salt
    ),
    "commitment changed": lambda r: attrs.evolve(
        r, pii_commitments={**r.pii_commitments, "stdout": commitment(None)}
    ),
    "downgraded to version 2": lambda r: attrs.evolve(r, digest_version=2, pii_salt=None),
}


@pytest.mark.spec("§9 salt-erasure", "C4 chain-per-run")
@pytest.mark.parametrize("tamper", sorted(TAMPERS))
@pytest.mark.parametrize("index", [0, 1, 2])
def test_tampering_with_a_version_3_field_or_salt_fails_at_that_record(tamper, index):
    contents = [{"input_snapshot": {"email": "ana@example.com"}, "stdout": "ok"}, {}, {"error": 1}]
    records, head = build_chain(contents, digest_version=3)
    records[index] = TAMPERS[tamper](records[index])
    core, outsider = both_verify(records, head)
    assert not core.verified
    assert core.failed_audit_id == records[index].audit_id
    assert not outsider["verified"]
    assert outsider["error"].startswith(f"{records[index].audit_id}:")


def test_a_salt_on_a_version_2_or_1_record_fails():
    for version in (1, 2):
        records, head = build_chain([{"stdout": "x"}], digest_version=version)
        records[0] = attrs.evolve(records[0], pii_salt=DOC_SALT.hex())
        core, outsider = both_verify(records, head)
        assert not core.verified
        assert not outsider["verified"]


@pytest.mark.spec("§9 digest-versions")
@given(
    st.lists(personal_data, min_size=1, max_size=4), st.lists(st.sampled_from([2, 3]), min_size=4)
)
def test_a_chain_mixing_versions_2_and_3_verifies_erased_or_not(contents, versions):
    """A tenant that switches versions mid-run writes one chain with both."""
    records = []
    for index, content in enumerate(contents):
        version = versions[index]
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=SIGNER,
                created_at=START + timedelta(seconds=index),
                digest_version=version,
                salt=bytes([index]) * SALT_BYTES if version == 3 else None,
                audit_id=f"audit-{index + 1}",
                run_id="run-1",
                tenant_id="t1",
                deployment_ref="dep",
                graph_version_ref="g@1",
                node_id="n",
                attempt=index + 1,
                status=AttemptStatus.SUCCEEDED,
                **content,
            )
        )
    for chain in (records, [crypto_erase(r, "x", START) for r in records]):
        core, outsider = both_verify(copy.deepcopy(chain))
        assert core.verified, core.error
        assert outsider["verified"], outsider["error"]
