"""Build audit chains directly with the core's sealing rules, for property tests."""

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from ecp_core.audit import ChainHead, NodeAuditRecord, seal
from ecp_core.canonical import MAX_SAFE_INTEGER
from ecp_core.signing import Ed25519Signer
from ecp_core.types import AttemptStatus

START = datetime(2026, 11, 1, tzinfo=UTC)
SIGNER = Ed25519Signer(bytes(range(32)), key_id="test-key")

STORABLE = st.characters(exclude_characters="\x00", exclude_categories=("Cs",))
"""Characters a text column can store: no U+0000, no lone surrogates."""


def text(**kwargs):
    """Storable text: ECP refuses U+0000 everywhere, since PostgreSQL cannot store it."""
    return st.text(alphabet=STORABLE, **kwargs)


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
personal_data = st.fixed_dictionaries(
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


def build_chain(
    contents: list[dict],
    *,
    signer: Ed25519Signer | None = SIGNER,
    digest_version: int = 2,
    run_id: str = "run-1",
) -> tuple[list[NodeAuditRecord], ChainHead | None]:
    """Seal one record per entry of ``contents`` (personal-data fields) into one run's chain."""
    records: list[NodeAuditRecord] = []
    for index, content in enumerate(contents):
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=signer,
                created_at=START + timedelta(seconds=index, microseconds=index),
                digest_version=digest_version,
                audit_id=f"audit-{index + 1}",
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
