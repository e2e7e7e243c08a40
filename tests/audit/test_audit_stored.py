"""Verification from stored canonical texts (ADR 0061), on records as a store would hand them.

A stored record whose texts are the canonical JSON of its values is proven without parsing;
verification over stored records answers exactly as over the records themselves, for any
content, any single changed text or envelope field, and records the texts cannot prove.
"""

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.audit import (
    PII_FIELDS,
    KeyRing,
    NodeAuditRecord,
    crypto_erase,
    verify_chain,
)
from ecp_core.audit.record import RunChain, StoredRecord
from ecp_core.audit.stored import kept_texts, proven, stored_record
from ecp_core.audit.verify import verify_run_chain
from ecp_core.canonical import canonical_json
from ecp_core.memory import MemoryStore
from ecp_core.testing.strategies.audit import SIGNER, START, build_chain, personal_data
from ecp_core.testing.strategies.text import STORABLE, json_values

pytestmark = [pytest.mark.unit, pytest.mark.spec("C4 stored-texts-verification")]

RING = KeyRing.of([SIGNER.published()])


def canonical_texts(record: NodeAuditRecord) -> tuple[str | None, ...]:
    """What a store keeping canonical texts holds for ``record``'s personal data."""
    return tuple(
        None if value is None else canonical_json(value).decode()
        for value in (getattr(record, field) for field in PII_FIELDS)
    )


def as_stored(records: list[NodeAuditRecord]) -> list[StoredRecord]:
    return [stored_record(record, canonical_texts(record)) for record in records]


def both(records: list[NodeAuditRecord], stored: list[StoredRecord]) -> Any:
    """The answer over stored records, checked equal to the answer over the records."""
    fast = verify_chain(stored, RING, scope="run")
    assert fast == verify_chain(records, RING, scope="run")
    return fast


@given(st.lists(personal_data, min_size=1, max_size=3), st.sampled_from([2, 3]))
def test_canonical_texts_prove_every_record(contents, version):
    """Texts that are the canonical JSON of the values prove each record; the answers agree."""
    records, _ = build_chain(contents, digest_version=version)
    stored = as_stored(records)
    assert all(proven(entry) for entry in stored)
    assert both(records, stored).verified


@given(
    st.lists(personal_data, min_size=1, max_size=3),
    st.sampled_from([2, 3]),
    st.data(),
)
def test_any_changed_text_is_found_either_way(contents, version, data):
    """One field's value changed in its stored text: not proven, and both answers fail alike."""
    records, _ = build_chain(contents, digest_version=version)
    index = data.draw(st.integers(0, len(records) - 1))
    field = data.draw(st.sampled_from(PII_FIELDS))
    old = getattr(records[index], field)
    new = data.draw(
        (st.text(STORABLE, max_size=5) if field in ("stdout", "stderr") else json_values).filter(
            lambda value: value is not None or old is not None
        )
    )
    if new is not None and old is not None and canonical_json(new) == canonical_json(old):
        new = ["changed", old]
    if field in ("stdout", "stderr") and not isinstance(new, str | None):
        new = f"changed {old}"
    changed = attrs.evolve(records[index], **{field: new})
    tampered = [*records[:index], changed, *records[index + 1 :]]
    stored = as_stored(tampered)
    assert not proven(stored[index])
    answer = both(tampered, stored)
    assert not answer.verified
    assert answer.failed_audit_id == changed.audit_id


@given(
    st.lists(personal_data, min_size=1, max_size=2),
    st.sampled_from(["node_id", "status", "created_at", "graph_version_ref", "digest_version"]),
)
def test_a_changed_envelope_is_found_either_way(contents, field):
    """An envelope field changed: the hashed form no longer hashes to the digest."""
    records, _ = build_chain(contents)
    replacement: dict[str, Any] = {
        "node_id": "other",
        "status": "failed",
        "created_at": START.replace(year=2030),
        "graph_version_ref": "g@2",
        "digest_version": 1,
    }
    changed = attrs.evolve(records[0], **{field: replacement[field]})
    tampered = [changed, *records[1:]]
    stored = as_stored(tampered)
    assert not proven(stored[0])
    assert not both(tampered, stored).verified


def test_texts_of_another_form_fall_back_and_verify():
    """Texts with spaces (rows written before stored texts) prove nothing; the record verifies."""
    records, _ = build_chain([{"input_snapshot": {"a": 1, "b": [1, 2]}, "stdout": "x"}])
    spaced = tuple(
        None if text is None else text.replace(",", ", ").replace(":", ": ")
        for text in canonical_texts(records[0])
    )
    stored = [stored_record(records[0], spaced)]
    assert not proven(stored[0])
    assert both(records, stored).verified


def test_erased_and_version_1_records_take_the_full_path():
    """Erased records and version 1 records are never proven from texts, and still verify."""
    records, _ = build_chain([{"input_snapshot": {"email": "a@b.c"}}, {}])
    erased = [crypto_erase(records[0], "request", START), records[1]]
    legacy, _ = build_chain([{"stdout": "x"}], digest_version=1)
    for chain in (erased, legacy):
        stored = as_stored(chain)
        assert not proven(stored[0])
        assert both(chain, stored).verified


def _stored_in_memory(records: list[NodeAuditRecord]) -> MemoryStore:
    store = MemoryStore()
    with store.unit_of_work() as uow:
        for record in records:
            uow.audit.append(record)
        uow.commit()
    return store


def _memory_chain(store: MemoryStore, run_id: str = "run-1") -> RunChain:
    with store.unit_of_work() as uow:
        (chain,) = uow.audit.chains("t1", [run_id])
    return chain


@given(st.lists(personal_data, min_size=1, max_size=3), st.sampled_from([2, 3]))
def test_the_memory_store_keeps_canonical_texts_and_proves_from_them(contents, version):
    """The memory store hands verification its kept texts (ADR 0069): a record whose values all
    take the first tier comes as stored and is proven; any other comes whole. Either way the
    answer is the answer over the records themselves."""
    records, head = build_chain(contents, digest_version=version)
    chain = _memory_chain(_stored_in_memory(records))
    for record, entry in zip(records, chain.entries, strict=True):
        texts = kept_texts(record)
        assert isinstance(entry, StoredRecord) == (texts is not None)
        if texts is not None:
            assert entry.texts == texts
            assert proven(entry)
    assert verify_run_chain(chain, RING) == verify_chain(
        records, RING, scope="run:run-1", head=head
    )
    assert list(chain.records) == records


def test_a_value_off_the_first_tier_keeps_no_texts():
    """A float JCS writes unlike Python: no texts are kept, and the record verifies in full."""
    records, _ = build_chain([{"output_snapshot": {"big": 1e16}}, {"stdout": "x"}])
    chain = _memory_chain(_stored_in_memory(records))
    assert kept_texts(records[0]) is None
    assert type(chain.entries[0]) is NodeAuditRecord
    assert isinstance(chain.entries[1], StoredRecord)
    assert verify_run_chain(chain, RING).verified


def test_erasure_removes_the_kept_texts_with_the_personal_data():
    """Crypto-erasure leaves no personal data behind in the kept texts; the chain still verifies."""
    records, _ = build_chain([{"input_snapshot": {"email": "a@b.c"}}, {"stdout": "x"}])
    store = _stored_in_memory(records)
    with store.unit_of_work() as uow:
        uow.audit.store_erasure(crypto_erase(records[0], "request", START))
        uow.commit()
    assert records[0].audit_id not in store.tables.table("audit_texts")
    assert "a@b.c" not in repr(store.tables.table("audit_texts"))
    chain = _memory_chain(store)
    assert type(chain.entries[0]) is NodeAuditRecord
    assert chain.entries[0].erased
    assert verify_run_chain(chain, RING).verified


def test_what_verification_is_handed_cannot_change_the_store():
    """Loading a stored entry and changing what it gives back leaves the stored record as it was."""
    records, _ = build_chain([{"input_snapshot": {"a": [1, 2]}}])
    store = _stored_in_memory(records)
    entry = _memory_chain(store).entries[0]
    assert isinstance(entry, StoredRecord)
    entry.load().input_snapshot["a"].append(3)
    entry.pii_commitments["input_snapshot"] = "sha256:0"
    assert _memory_chain(store).records == (records[0],)
    assert proven(_memory_chain(store).entries[0])
