"""Audit chains sealed with the core's own rules, and the personal data records carry."""

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from ecp_core.audit import ChainHead, NodeAuditRecord, seal
from ecp_core.audit.record import SALTED_DIGEST_VERSION
from ecp_core.signing import Ed25519Signer
from ecp_core.testing.strategies.text import json_values, text
from ecp_core.types import AttemptStatus

START = datetime(2026, 11, 1, tzinfo=UTC)
"""When the first record of a built chain is sealed."""
SIGNER = Ed25519Signer(bytes(range(32)), key_id="test-key")
"""A fixed signing key for built chains."""

personal_data: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "input_snapshot": json_values,
        "output_snapshot": json_values,
        "validation_results": json_values,
        "execution_metadata": st.dictionaries(text(max_size=6), json_values, max_size=3),
        "stdout": text(max_size=30) | st.none(),
        "stderr": text(max_size=30) | st.none(),
        "error": json_values,
        "tool_calls": st.lists(json_values, max_size=3) | st.none(),
        "memory_interactions": st.lists(json_values, max_size=3) | st.none(),
    },
)
"""The personal-data fields of an audit record (what crypto-erasure removes), any subset."""


def build_chain(
    contents: Sequence[Mapping[str, Any]],
    *,
    signer: Ed25519Signer | None = SIGNER,
    digest_version: int = 2,
    run_id: str = "run-1",
    audit_prefix: str = "audit-",
) -> tuple[list[NodeAuditRecord], ChainHead | None]:
    """Seal one record per entry of ``contents`` (personal-data fields) into one run's chain.

    Audit ids are ``audit_prefix`` and the attempt number.

    Version 3 records get fixed, distinct salts (:func:`fixed_salt`), so chains are reproducible.
    """
    records: list[NodeAuditRecord] = []
    for index, content in enumerate(contents):
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=signer,
                created_at=START + timedelta(seconds=index, microseconds=index),
                digest_version=digest_version,
                salt=fixed_salt(run_id, index) if digest_version == SALTED_DIGEST_VERSION else None,
                audit_id=f"{audit_prefix}{index + 1}",
                run_id=run_id,
                tenant_id="t1",
                deployment_ref="dep",
                graph_version_ref="g@1",
                node_id=f"node-{index % 3}",
                attempt=index + 1,
                status=AttemptStatus.SUCCEEDED,
                **content,
            )
        )
    head = (
        ChainHead(run_id=run_id, attempt=len(records), record_digest=records[-1].record_digest)
        if records
        else None
    )
    return records, head


def fixed_salt(run_id: str, index: int) -> bytes:
    """A reproducible 32-byte salt for record ``index`` of ``run_id`` (tests only; never secret)."""
    return hashlib.sha256(f"salt/{run_id}/{index}".encode()).digest()


def chains(max_records: int = 4) -> st.SearchStrategy[list[NodeAuditRecord]]:
    """One run's chain of up to ``max_records`` sealed records with random personal data."""
    return st.lists(personal_data, max_size=max_records).map(lambda c: build_chain(c)[0])
