"""Verification from stored canonical texts on PostgreSQL (ADR 0061).

``append`` writes each personal-data ``json`` column as the canonical text its commitment hashes;
verification hashes the texts as stored and parses only what they do not prove. Checked here on
a real database: for arbitrary record contents the fast and the full verification give the same
answer; any single field changed through plain SQL is found either way; rows written before
stored texts (``json.dumps``, with spaces) and erased records verify through the full path.
"""

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Json

from ecp_core.audit import PII_FIELDS, KeyRing, crypto_erase, verify_chain
from ecp_core.audit.record import AuditVerificationResponse, NodeAuditRecord, RunChain
from ecp_core.audit.stored import proven
from ecp_core.audit.verify import verify_run_chain
from ecp_core.canonical import by_orjson
from ecp_core.testing.strategies.audit import SIGNER, START, build_chain, personal_data
from ecp_postgres import PostgresStore, create_database, drop_database
from ecp_postgres.audit_chains import stored_text

pytestmark = [pytest.mark.integration, pytest.mark.spec("C4 stored-texts-verification")]

RING = KeyRing.of([SIGNER.published()])
JSON_COLUMNS = [field for field in PII_FIELDS if field not in ("stdout", "stderr")]
_runs = itertools.count()
fixture_settings = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def database(postgres_url, migrated_template):
    """One migrated database for the properties; each example writes runs of its own."""
    name = "ecp_test_audit_stored_texts"
    drop_database(postgres_url, name)
    yield create_database(postgres_url, name, template=migrated_template)
    drop_database(postgres_url, name)


@contextlib.contextmanager
def opened(url: str) -> Iterator[PostgresStore]:
    """A pool opened inside the example (its threads never run while Hypothesis draws)."""
    with PostgresStore(url, max_size=1) as store:
        yield store


def _appended(store: Any, contents: list[dict[str, Any]], version: int) -> list[NodeAuditRecord]:
    """A fresh run's chain of ``contents``, appended through the adapter and committed."""
    run_id = f"run-{next(_runs)}"
    records, _ = build_chain(
        contents, digest_version=version, run_id=run_id, audit_prefix=f"{run_id}-"
    )
    with store.unit_of_work() as uow:
        for record in records:
            uow.audit.append(record)
        uow.commit()
    return records


def _chain(store: Any, run_id: str) -> RunChain:
    with store.unit_of_work() as uow:
        (chain,) = uow.audit.chains("t1", [run_id])
    return chain


def _both(chain: RunChain) -> AuditVerificationResponse:
    """The fast answer (texts as stored), checked equal to the full one (every record loaded)."""
    fast = verify_run_chain(chain, RING)
    full = verify_chain(chain.records, RING, scope=f"run:{chain.run_id}", head=chain.head)
    assert fast == full
    return fast


@fixture_settings
@given(st.lists(personal_data, min_size=1, max_size=3), st.sampled_from([2, 3]))
def test_fast_and_full_verification_agree(database, contents, version):
    """Any contents: the same answer both ways; first-tier values are proven from their texts."""
    with opened(database) as store:
        records = _appended(store, contents, version)
        chain = _chain(store, records[0].run_id)
    assert list(chain.records) == records
    answer = _both(chain)
    assert answer.verified
    assert answer.signature_verified
    for record, entry in zip(records, chain.entries, strict=True):
        first_tier = all(
            by_orjson(getattr(record, field)) is not None
            for field in JSON_COLUMNS
            if getattr(record, field) is not None
        )
        if first_tier:
            assert proven(entry)


TAMPERS = {
    "input_snapshot": "UPDATE ecp_audit_records SET input_snapshot = %s WHERE audit_id = %s",
    "error": "UPDATE ecp_audit_records SET error = %s WHERE audit_id = %s",
    "stdout": "UPDATE ecp_audit_records SET stdout = %s WHERE audit_id = %s",
    "node_id": "UPDATE ecp_audit_records SET node_id = node_id || 'x' WHERE audit_id = %s",
    "status": "UPDATE ecp_audit_records SET status = 'failed' WHERE audit_id = %s",
    "created_at": "UPDATE ecp_audit_records"
    " SET created_at = created_at + interval '1 microsecond' WHERE audit_id = %s",
    "digest_version": "UPDATE ecp_audit_records SET digest_version = 5 - digest_version"
    " WHERE audit_id = %s",
    "record_digest": "UPDATE ecp_audit_records SET record_digest = 'sha256:' || repeat('0', 64)"
    " WHERE audit_id = %s",
    "pii_commitments": "UPDATE ecp_audit_records SET pii_commitments = jsonb_set("
    "pii_commitments, '{stderr}', to_jsonb('sha256:' || repeat('1', 64))) WHERE audit_id = %s",
    "extra_commitment": "UPDATE ecp_audit_records"
    ' SET pii_commitments = pii_commitments || \'{"extra": "x"}\' WHERE audit_id = %s',
    "erased": "UPDATE ecp_audit_records SET erased = true WHERE audit_id = %s",
    "signature": "UPDATE ecp_audit_records SET signature = reverse(signature) WHERE audit_id = %s",
    "salt": "UPDATE ecp_audit_salts SET salt = sha256(salt) WHERE audit_id = %s",
}
VALUE_TAMPERS = {"input_snapshot", "error", "stdout"}


def _tamper(url: str, kind: str, record: NodeAuditRecord) -> None:
    """Change one field of one stored record through plain SQL."""
    with psycopg.connect(url, autocommit=True) as conn:
        if kind not in VALUE_TAMPERS:
            conn.execute(TAMPERS[kind], (record.audit_id,))
            return
        old = getattr(record, kind)
        if kind == "stdout":
            new: Any = f"{old or ''} changed"
        else:
            new = Json(["changed", old], dumps=stored_text)
        conn.execute(TAMPERS[kind], (new, record.audit_id))


@fixture_settings
@given(
    st.lists(personal_data, min_size=1, max_size=3),
    st.sampled_from([2, 3]),
    st.sampled_from(sorted(TAMPERS)),
    st.data(),
)
def test_any_single_field_change_is_found_either_way(database, contents, version, kind, data):
    """One stored field changed through SQL: both verifications fail, with the same answer."""
    index = data.draw(st.integers(0, len(contents) - 1))
    with opened(database) as store:
        records = _appended(store, contents, version)
        target = records[index]
        _tamper(database, kind, target)
        answer = _both(_chain(store, target.run_id))
    holds_data = any(getattr(target, field) is not None for field in PII_FIELDS)
    unchanged = version == 2 and (
        kind == "salt"  # a version 2 record has no salt
        or (kind == "erased" and not holds_data)  # nothing to erase: a valid erasure
    )
    assert bool(answer.verified and answer.signature_verified) == unchanged


def test_rows_written_before_stored_texts_verify_through_the_full_path(postgres_store):
    """Texts from json.dumps (with spaces), as rows written before this change: not proven, valid."""
    contents = [{"input_snapshot": {"b": [1, 2], "a": "Zoë"}, "stdout": "x"}, {"error": {"c": 1}}]
    records = _appended(postgres_store, contents, 2)
    with psycopg.connect(postgres_store.url, autocommit=True) as conn:
        for record in records:
            for field in JSON_COLUMNS:
                value = getattr(record, field)
                conn.execute(
                    f"UPDATE ecp_audit_records SET {field} = %s WHERE audit_id = %s",  # noqa: S608
                    (None if value is None else Json(value), record.audit_id),
                )
        spaced = conn.execute(
            "SELECT input_snapshot::text FROM ecp_audit_records WHERE audit_id = %s",
            (records[0].audit_id,),
        ).fetchone()
    assert spaced == ('{"b": [1, 2], "a": "Zo\\u00eb"}',)
    chain = _chain(postgres_store, records[0].run_id)
    assert [proven(entry) for entry in chain.entries] == [False, False]
    assert list(chain.records) == records
    assert _both(chain).verified


def test_erased_records_verify_through_the_full_path(postgres_store):
    """An erased record holds no texts to prove; its chain still verifies."""
    records = _appended(postgres_store, [{"input_snapshot": {"email": "a@b.c"}}, {}], 3)
    with postgres_store.unit_of_work() as uow:
        uow.audit.store_erasure(crypto_erase(records[0], "request", START))
        uow.commit()
    chain = _chain(postgres_store, records[0].run_id)
    assert not proven(chain.entries[0])
    assert proven(chain.entries[1])
    assert _both(chain).verified
