"""Wire models of the transparency log's routes: proofs, keys, and their query strings."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.runs.audit.bundle import LogKey
from ecp_http.wire.query import QUERY_NAME, described

TreeSize = Annotated[int, Range(0, 2**63 - 1)]


@described(
    audit_id="the audit record whose leaf is proved",
    tree_size="the tree to prove it in (default: the newest checkpoint's)",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class InclusionQuery:
    """Which record, in which tree."""

    audit_id: Annotated[str, Text(1, 200)]
    tree_size: TreeSize | None = None


@described(**{"from": "the older tree's size", "to": "the newer tree's size"})
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsistencyQuery:
    """Between which two tree sizes (``from`` and ``to``)."""

    first: TreeSize = attrs.field(metadata={QUERY_NAME: "from"})
    second: TreeSize = attrs.field(metadata={QUERY_NAME: "to"})


@described(
    deployment_ref="the deployment whose records the export is for",
    since="the window's start (RFC 3339, with its offset)",
    until="the window's end, excluded (RFC 3339, with its offset)",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ExportQuery:
    """Which deployment, over which window ``[since, until)``."""

    deployment_ref: Annotated[str, Text(1, 200)]
    since: Annotated[datetime, AwareUtc()]
    until: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class InclusionProofResponse:
    """Where the record's leaf is and the hashes (base64, leaf end first) that prove it."""

    audit_id: str
    """The record proved."""
    leaf_index: int
    """Its leaf's position in the log (0 first)."""
    tree_size: int
    """The tree the proof is for."""
    hashes: tuple[str, ...]
    """The audit path, base64, from the leaf's sibling up (RFC 9162)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsistencyProofResponse:
    """The hashes (base64) proving the older tree a prefix of the newer."""

    hashes: tuple[str, ...]
    """The consistency proof, base64 (RFC 9162)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class LogKeysResponse:
    """The keys that verify the tenant's checkpoints, the current one first."""

    keys: tuple[LogKey, ...]
    """The current key, then retired keys that still verify older checkpoints."""


__all__ = [
    "ConsistencyProofResponse",
    "ConsistencyQuery",
    "ExportQuery",
    "InclusionProofResponse",
    "InclusionQuery",
    "LogKeysResponse",
]
