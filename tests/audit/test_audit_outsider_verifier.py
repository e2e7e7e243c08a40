"""An outsider's verifier, written only with hashlib, rfc8785 and PyNaCl, checks real chains.

The verifier below is the reference verifier of docs/audit-format.md, verbatim (a test checks it):
it reads the JSON export of a run's timeline, never the core's models, so these tests hold the
documented format to what the core actually writes.
"""

import base64
import copy
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nacl.exceptions
import nacl.signing
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.audit_doc import documented_statuses

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphDefinition,
    ServiceRole,
    StartRunRequest,
    structure,
)
from ecp_core.audit import (
    AuditTimelineResponse,
    Ed25519Signer,
    KeyRing,
    NodeAuditRecord,
    commitment,
    crypto_erase,
    seal,
    verify_chain,
)
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.retention import ErasureRequest
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.strategies.audit import personal_data
from ecp_core.types import AttemptStatus
from ecp_core.wire import unstructure

pytestmark = [pytest.mark.unit, pytest.mark.spec("C4 audit-format-doc")]

DOC = Path(__file__).resolve().parents[2] / "docs" / "audit-format.md"

# --- the reference verifier of docs/audit-format.md (keep identical to the document) ---------
# fmt: off

PII_FIELDS = ("input_snapshot", "output_snapshot", "validation_results", "execution_metadata",
              "stdout", "stderr", "error", "tool_calls", "memory_interactions")
ENVELOPE_FIELDS = ("audit_id", "run_id", "tenant_id", "deployment_ref", "graph_version_ref",
                   "node_id", "attempt", "status", "created_at", "digest_version",
                   "previous_record_digest")
SALTED_TAG = b"ecp.audit.pii.v3"


def h(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def commit(name: str, value, salt: bytes | None) -> str:
    """Version 2 (no salt): H(JCS(value)); version 3: H(tag 0x00 name 0x00 salt JCS(value))."""
    if salt is None:
        return h(rfc8785.dumps(value))
    return h(SALTED_TAG + b"\0" + name.encode("ascii") + b"\0" + salt + rfc8785.dumps(value))


def record_salt(record: dict) -> bytes | None:
    """The salt of a version 3 record that is not erased; None for every other record."""
    text = record.get("pii_salt")  # exports older than version 3 have no such key
    if record["digest_version"] != 3 or record["erased"]:
        if text is not None:
            raise ValueError("only a version 3 record that is not erased carries a salt")
        return None
    salt = bytes.fromhex(text)
    if len(salt) != 32 or salt.hex() != text:
        raise ValueError("pii_salt must be 64 lowercase hex digits")
    return salt


def recompute_digest(record: dict) -> str:
    """The record digest recomputed from an exported record; ValueError when inconsistent."""
    hashed = {name: record[name] for name in ENVELOPE_FIELDS}
    plain = {name: record[name] for name in PII_FIELDS}
    salt = record_salt(record)
    if record["digest_version"] == 1 and not record["erased"]:
        return h(rfc8785.dumps({**hashed, **plain}))  # legacy: plaintext is hashed
    stored = record["pii_commitments"]
    if record["digest_version"] not in (2, 3):
        raise ValueError("unknown digest_version, or an erased version 1 record")
    if not isinstance(stored, dict) or stored.keys() != plain.keys():
        raise ValueError("pii_commitments must commit to every personal-data field")
    if record["erased"] and any(value is not None for value in plain.values()):
        raise ValueError("an erased record still holds personal data")
    if not record["erased"] and any(commit(n, v, salt) != stored[n] for n, v in plain.items()):
        raise ValueError("personal data does not match its commitments")
    return h(rfc8785.dumps({**hashed, "pii_commitments": stored}))


def check_record(record: dict, index: int, previous: str | None) -> None:
    if record["attempt"] != index + 1 or record["previous_record_digest"] != previous:
        raise ValueError("record out of place in the chain")
    if recompute_digest(record) != record["record_digest"]:
        raise ValueError("record_digest does not match the record")


def verify_timeline(timeline: dict, keys: list, head: tuple | None = None) -> dict:
    """Verify an exported timeline against published keys and, optionally, a trusted head."""
    ring = {key["key_id"]: key["public_key"] for key in keys if key["algorithm"] == "ed25519"}
    entries, previous, error, signed, signatures_ok = timeline["entries"], None, None, 0, True
    for index, record in enumerate(entries):
        try:
            check_record(record, index, previous)
        except (KeyError, TypeError, ValueError) as exc:
            error = error or f"{record.get('audit_id')}: {exc}"
        previous = record.get("record_digest")
        if record.get("signature") is not None:
            signed += 1
            try:
                key = nacl.signing.VerifyKey(base64.b64decode(ring[record["signing_key_id"]]))
                key.verify(record["record_digest"].encode("ascii"),
                           base64.b64decode(record["signature"], validate=True))
            except (KeyError, TypeError, ValueError, nacl.exceptions.CryptoError):
                signatures_ok = False
    if error is None and head is not None and tuple(head) != (len(entries), previous):
        error = "chain does not end at the trusted head"
    return {"verified": error is None, "signature_verified": signatures_ok if signed else None,
            "record_count": len(entries), "unsigned_record_count": len(entries) - signed,
            "error": error}


# fmt: on


# --- building and exporting real chains -------------------------------------------------------

SIGNER = Ed25519Signer(bytes(range(32)))
OTHER = Ed25519Signer(bytes(range(1, 33)))
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MAX_SAFE = 2**53 - 1


def sealed_chain(contents, *, signer=SIGNER, digest_version=2, run_id="run-1"):
    """One record per entry of ``contents`` (personal-data fields), sealed by the core."""
    records = []
    for index, content in enumerate(contents):
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=signer,
                created_at=START + timedelta(seconds=index, microseconds=17 * index),
                digest_version=digest_version,
                audit_id=f"audit-{index + 1}",
                run_id=run_id,
                tenant_id="acme",
                deployment_ref="refunds",
                graph_version_ref="refund-triage@1",
                node_id=f"node-{index % 3}",
                attempt=index + 1,
                status=list(AttemptStatus)[index % len(AttemptStatus)],
                **content,
            )
        )
    return records


def export(records):
    """The JSON a client receives from GET /runs/{run_id}/timeline, parsed back."""
    timeline = AuditTimelineResponse(
        deployment_ref="refunds", run_id="run-1", entries=tuple(records)
    )
    return json.loads(json.dumps(unstructure(timeline)))


def published(*signers):
    """The keys as GET /v1/audit/signing-keys publishes them, parsed back."""
    return json.loads(json.dumps([unstructure(signer.published()) for signer in signers]))


def head_of(timeline):
    entries = timeline["entries"]
    return (len(entries), entries[-1]["record_digest"] if entries else None)


CONTENTS = [
    {
        "input_snapshot": {"order": "A-1001", "email": "ana@example.com", "amount_cents": 1299},
        "output_snapshot": {"category": "refund", "score": 0.875},
        "execution_metadata": {"node_kind": "action", "step": 1, "tags": ["fast", "π"]},
        "stdout": "classified\n",
    },
    {
        "input_snapshot": {"category": "refund"},
        "execution_metadata": {
            "node_kind": "action",
            "step": 2,
            "enforcement": {"decision": "allow", "reason": "within limits"},
        },
        "tool_calls": [{"name": "lookup", "arguments": {"id": 7}}],
        "stderr": "",
    },
    {
        "error": {"type": "timeout", "after_seconds": 1.5},
        "memory_interactions": [{"key": "customer", "op": "read"}],
        "validation_results": [True, None, -3],
    },
]


# --- the document and the code agree ------------------------------------------------------------


def test_the_tested_verifier_is_the_documented_one():
    text = DOC.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    code = text[start : text.index("```", start)]
    imports, body = code.split("PII_FIELDS = (", 1)
    source = Path(__file__).read_text(encoding="utf-8")
    assert "PII_FIELDS = (" + body in source
    for line in imports.splitlines():
        assert line in source.splitlines()


def test_the_worked_example_is_what_the_core_computes():
    text = DOC.read_text(encoding="utf-8")
    base = {
        "run_id": "run-1",
        "tenant_id": "acme",
        "deployment_ref": "refunds",
        "graph_version_ref": "refund-triage@1",
    }
    first = seal(
        previous_record_digest=None,
        signer=SIGNER,
        created_at=START,
        audit_id="audit-1",
        node_id="classify",
        attempt=1,
        status=AttemptStatus.SUCCEEDED,
        input_snapshot={"order": "A-1001", "email": "ana@example.com"},
        output_snapshot={"category": "refund"},
        execution_metadata={"node_kind": "action", "step": 1},
        **base,
    )
    second = seal(
        previous_record_digest=first.record_digest,
        signer=SIGNER,
        created_at=START + timedelta(microseconds=250_000),
        audit_id="audit-2",
        node_id="review",
        attempt=2,
        status=AttemptStatus.WAITING_APPROVAL,
        input_snapshot={"category": "refund"},
        execution_metadata={"node_kind": "approval", "step": 2},
        **base,
    )
    key = published(SIGNER)[0]
    assert json.dumps(key) in text
    for value in (
        commitment(None),
        *first.pii_commitments.values(),
        first.record_digest,
        first.signature,
        second.record_digest,
    ):
        assert value in text
    erased = crypto_erase(first, "subject request", START + timedelta(days=31))
    timeline = export([erased, second])
    result = verify_timeline(timeline, [key], head=head_of(timeline))
    assert result == {
        "verified": True,
        "signature_verified": True,
        "record_count": 2,
        "unsigned_record_count": 0,
        "error": None,
    }


# --- chains the service writes ------------------------------------------------------------------


def run_example(ecp, tenant="acme"):
    """Register, deploy, start and approve the example graph; return the run id."""
    graph = ecp.graphs.register(tenant, structure(EXAMPLE_GRAPH, GraphDefinition))
    ecp.graphs.deploy(
        tenant, CreateDeploymentRequest(deployment_ref="refunds", graph_id=graph.graph_id)
    )
    run, _ = ecp.runs.start(
        tenant, StartRunRequest(deployment_ref="refunds", input={"order": "A-1001", "name": "Zoë"})
    )
    run = ecp.runs.drive(tenant, run.run_id)
    reviewer = ActorIdentity(
        subject="reviewer@example.com",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.APPROVER,),
        tenant_id=tenant,
    )
    ecp.resolve(
        reviewer,
        "refunds",
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, reason="Looks right"),
    )
    return run.run_id


@pytest.fixture
def service():
    clock = FixedClock(START)
    return Ecp.in_memory(signer=SIGNER, clock=clock, ids=SequentialIds("id"))


def service_keys(ecp):
    return json.loads(json.dumps([unstructure(key) for key in ecp.audit.signing_keys()]))


def test_a_run_written_by_the_service_verifies(service):
    run_id = run_example(service)
    timeline = json.loads(json.dumps(unstructure(service.audit.timeline("acme", run_id))))
    entries = timeline["entries"]
    assert len(entries) >= 3
    assert all(entry["signature"] is not None for entry in entries)
    result = verify_timeline(timeline, service_keys(service), head=head_of(timeline))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True
    official = service.audit.verify_run("acme", run_id)
    assert official.verified
    assert result["record_count"] == official.record_count == len(entries)


@pytest.mark.spec("§3.2 crypto-erase-v2")
def test_a_run_erased_by_the_service_still_verifies(service):
    run_id = run_example(service)
    before = json.loads(json.dumps(unstructure(service.audit.timeline("acme", run_id))))
    dpo = ActorIdentity(subject="dpo", auth_method=AuthMethod.BEARER, tenant_id="acme")
    report = service.retention.request_erasure(
        dpo, ErasureRequest(run_id=run_id, reason="subject request")
    )
    assert report.runs[0].steps[0].newly_erased == len(before["entries"])
    after = json.loads(json.dumps(unstructure(service.audit.timeline("acme", run_id))))
    for old, new in zip(before["entries"], after["entries"], strict=True):
        assert new["erased"] is True
        assert all(new[field] is None for field in PII_FIELDS)
        for kept in ("record_digest", "previous_record_digest", "pii_commitments", "signature"):
            assert new[kept] == old[kept]
    assert any(old[field] is not None for old in before["entries"] for field in PII_FIELDS)
    result = verify_timeline(after, service_keys(service), head=head_of(before))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True
    assert result["record_count"] == len(before["entries"])
    assert service.audit.verify_run("acme", run_id).verified


@pytest.mark.spec("C3 approval-escalation")
def test_an_escalated_approval_is_in_the_chain_and_verifies():
    clock = FixedClock(START)
    ecp = Ecp.in_memory(signer=SIGNER, clock=clock, ids=SequentialIds("id"))
    graph = copy.deepcopy(EXAMPLE_GRAPH)
    graph["nodes"][1]["sla_seconds"] = 60
    ecp.graphs.register("acme", structure(graph, GraphDefinition))
    ecp.graphs.deploy(
        "acme", CreateDeploymentRequest(deployment_ref="refunds", graph_id="refund-triage")
    )
    run, _ = ecp.runs.start("acme", StartRunRequest(deployment_ref="refunds", input={"o": 1}))
    ecp.runs.drive("acme", run.run_id)
    clock.advance(61)
    (replacement,) = ecp.approvals.escalate_overdue()
    reviewer = ActorIdentity(subject="r", auth_method=AuthMethod.BEARER, tenant_id="acme")
    ecp.resolve(
        reviewer,
        "refunds",
        replacement.approval_id,
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE),
    )
    timeline = json.loads(json.dumps(unstructure(ecp.audit.timeline("acme", run.run_id))))
    statuses = [entry["status"] for entry in timeline["entries"]]
    assert statuses[:4] == ["succeeded", "waiting_approval", "escalated", "approved"]
    assert set(statuses) <= set(documented_statuses())
    result = verify_timeline(timeline, service_keys(ecp), head=head_of(timeline))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True
    assert ecp.audit.verify_run("acme", run.run_id).verified


def test_a_chain_of_every_documented_status_verifies():
    records = sealed_chain([CONTENTS[index % len(CONTENTS)] for index in range(len(AttemptStatus))])
    timeline = export(records)
    assert [entry["status"] for entry in timeline["entries"]] == documented_statuses()
    result = verify_timeline(timeline, published(SIGNER), head=head_of(timeline))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True


# --- good chains, erased chains, tampered chains ---------------------------------------------


def test_a_sealed_chain_verifies_and_agrees_with_the_core():
    records = sealed_chain(CONTENTS)
    timeline = export(records)
    assert verify_timeline(timeline, published(SIGNER), head=head_of(timeline)) == {
        "verified": True,
        "signature_verified": True,
        "record_count": 3,
        "unsigned_record_count": 0,
        "error": None,
    }
    for record, entry in zip(records, timeline["entries"], strict=True):
        assert recompute_digest(entry) == record.record_digest


@pytest.mark.spec("§3.2 crypto-erase-v2")
@pytest.mark.parametrize("erase", [(0,), (1,), (0, 2), (0, 1, 2)])
def test_a_crypto_erased_chain_still_verifies(erase):
    records = sealed_chain(CONTENTS)
    records = [
        crypto_erase(record, "retention ttl", START + timedelta(days=400))
        if index in erase
        else record
        for index, record in enumerate(records)
    ]
    timeline = export(records)
    for index in erase:
        assert all(timeline["entries"][index][field] is None for field in PII_FIELDS)
    result = verify_timeline(timeline, published(SIGNER), head=head_of(timeline))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True


def tampered(value):
    """A different JSON value of a similar kind."""
    if isinstance(value, bool) or value is None:
        return "tampered"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1")
    if isinstance(value, dict):
        return {**value, "tampered": True}
    return [*value, "tampered"]


HASHED_FIELDS = (
    "audit_id",
    "run_id",
    "tenant_id",
    "deployment_ref",
    "graph_version_ref",
    "node_id",
    "status",
    "created_at",
    "previous_record_digest",
    "record_digest",
    *PII_FIELDS,
)


@pytest.mark.spec("C4 chain-per-run")
@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("field", HASHED_FIELDS)
def test_changing_a_hashed_field_fails(field, index):
    timeline = export(sealed_chain(CONTENTS))
    record = timeline["entries"][index]
    if field == "previous_record_digest" and record[field] is None:
        record[field] = "sha256:" + "0" * 64
    else:
        record[field] = tampered(record[field])
    result = verify_timeline(timeline, published(SIGNER))
    assert result["verified"] is False
    assert result["error"].startswith(f"{record['audit_id']}:")  # fails at that record


@pytest.mark.parametrize("field", PII_FIELDS)
def test_changing_a_commitment_of_an_erased_record_fails(field):
    records = sealed_chain(CONTENTS)
    records[1] = crypto_erase(records[1], "subject request", START)
    timeline = export(records)
    timeline["entries"][1]["pii_commitments"][field] = "sha256:" + "f" * 64
    result = verify_timeline(timeline, published(SIGNER))
    assert result["verified"] is False
    assert result["error"].startswith("audit-2:")


def test_the_timestamp_is_hashed_in_its_exact_string_form():
    timeline = export(sealed_chain(CONTENTS))
    entry = timeline["entries"][0]
    assert entry["created_at"] == "2026-03-01T12:00:00.000000Z"
    entry["created_at"] = "2026-03-01T12:00:00+00:00"  # the same instant, written differently
    assert verify_timeline(timeline, published(SIGNER))["verified"] is False


def test_erasure_flags_are_not_hashed_but_unerased_data_must_match():
    timeline = export(sealed_chain(CONTENTS))
    entry = timeline["entries"][0]
    entry["erased"] = True  # still holding personal data: refused
    assert verify_timeline(timeline, published(SIGNER))["verified"] is False
    for field in PII_FIELDS:
        entry[field] = None  # a forged erasure removes evidence and is not detectable
    assert verify_timeline(timeline, published(SIGNER))["verified"] is True


@pytest.mark.spec("C4 chain-per-run")
def test_reordering_or_deleting_records_fails_and_truncation_needs_the_head():
    timeline = export(sealed_chain(CONTENTS))
    head = head_of(timeline)
    swapped = copy.deepcopy(timeline)
    swapped["entries"][0], swapped["entries"][1] = swapped["entries"][1], swapped["entries"][0]
    assert verify_timeline(swapped, published(SIGNER))["verified"] is False
    middle = copy.deepcopy(timeline)
    del middle["entries"][1]
    assert verify_timeline(middle, published(SIGNER))["verified"] is False
    truncated = copy.deepcopy(timeline)
    del truncated["entries"][-1]
    assert verify_timeline(truncated, published(SIGNER))["verified"] is True
    assert verify_timeline(truncated, published(SIGNER), head=head)["verified"] is False


@pytest.mark.spec("C4 ed25519-signatures")
def test_a_wrong_public_key_fails_the_signature_axis_only():
    timeline = export(sealed_chain(CONTENTS))
    impostor = [{**published(OTHER)[0], "key_id": SIGNER.key_id}]
    result = verify_timeline(timeline, impostor)
    assert result["verified"] is True
    assert result["signature_verified"] is False
    assert verify_timeline(timeline, published(OTHER))["signature_verified"] is False  # unknown id
    assert verify_timeline(timeline, [])["signature_verified"] is False


@pytest.mark.spec("C4 ed25519-signatures", "§2.3 audit-verification")
def test_a_changed_signature_fails_and_unsigned_chains_report_null():
    timeline = export(sealed_chain(CONTENTS))
    raw = bytearray(base64.b64decode(timeline["entries"][2]["signature"]))
    raw[0] ^= 1
    timeline["entries"][2]["signature"] = base64.b64encode(bytes(raw)).decode("ascii")
    assert verify_timeline(timeline, published(SIGNER))["signature_verified"] is False
    unsigned = export(sealed_chain(CONTENTS, signer=None))
    result = verify_timeline(unsigned, published(SIGNER))
    assert result["verified"] is True
    assert result["signature_verified"] is None
    assert result["unsigned_record_count"] == 3


@pytest.mark.spec("§9 digest-versions")
def test_legacy_version_1_records_hash_their_plaintext():
    timeline = export(sealed_chain(CONTENTS, digest_version=1))
    assert all(entry["pii_commitments"] is None for entry in timeline["entries"])
    assert verify_timeline(timeline, published(SIGNER))["verified"] is True
    changed = copy.deepcopy(timeline)
    changed["entries"][0]["stdout"] = "something else"
    assert verify_timeline(changed, published(SIGNER))["verified"] is False
    erased = copy.deepcopy(timeline)
    erased["entries"][0]["erased"] = True
    assert verify_timeline(erased, published(SIGNER))["verified"] is False


# --- property: the outsider recomputes every digest the core writes -------------------------------

# The strategies are the shared ones: what is independent here is the verifier, not the data.


@settings(max_examples=80, deadline=None)
@given(
    contents=st.lists(personal_data, min_size=1, max_size=4),
    digest_version=st.sampled_from([1, 2]),
    erase=st.sets(st.integers(0, 3)),
)
def test_the_outsider_recomputes_the_core_digest(contents, digest_version, erase):
    records = sealed_chain(contents, digest_version=digest_version)
    timeline = export(records)
    for record, entry in zip(records, timeline["entries"], strict=True):
        assert recompute_digest(entry) == record.record_digest
        if digest_version == 2:
            for field in PII_FIELDS:
                expected = h(rfc8785.dumps(entry[field]))
                assert record.pii_commitments[field] == expected
    if digest_version == 2:
        records = [
            crypto_erase(record, "subject request", START) if index in erase else record
            for index, record in enumerate(records)
        ]
    timeline = export(records)
    result = verify_timeline(timeline, published(SIGNER), head=head_of(timeline))
    assert result["verified"], result["error"]
    assert result["signature_verified"] is True
    core = verify_chain(
        [structure(entry, NodeAuditRecord) for entry in timeline["entries"]],
        KeyRing.of([SIGNER]),
        scope="run:run-1",
    )
    assert core.verified
