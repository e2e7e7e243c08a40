"""The transparency log's routes: checkpoint, tiles, proofs, keys and a run's audit bundle.

Tenant-scoped like every route. The checkpoint is a C2SP signed note (``text/plain``), tiles are
raw hashes (``application/octet-stream``) at C2SP's paths, proofs are JSON with base64 hashes.
"""

import base64
from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from ecp_core.errors import NotFound
from ecp_core.permissions import Permission
from ecp_core.runs.audit.bundle import AuditBundle, AuditBundles, LogKey
from ecp_core.runs.audit.export import AuditExport, AuditExports
from ecp_core.transparency.keys import key_view
from ecp_core.transparency.service import TransparencyLog
from ecp_core.transparency.tiles import parse_tile_path
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.transparency import (
    ConsistencyProofResponse,
    ConsistencyQuery,
    ExportQuery,
    InclusionProofResponse,
    InclusionQuery,
    LogKeysResponse,
)

CHECKPOINT_MEDIA = "text/plain; charset=utf-8"
TILE_MEDIA = "application/octet-stream"


def _log(services: Services) -> TransparencyLog:
    if services.ecp.transparency is None:
        raise NotFound("this server keeps no transparency log (it has no signing key)")
    return services.ecp.transparency


def _b64(hashes: tuple[bytes, ...]) -> tuple[str, ...]:
    return tuple(base64.b64encode(h).decode("ascii") for h in hashes)


def checkpoint(call: Call, services: Services) -> Response:
    """The newest signed checkpoint of the caller's tenant's log."""
    note = _log(services).checkpoint(call.tenant)
    return Response(note, media_type=CHECKPOINT_MEDIA, headers={"Cache-Control": "no-cache"})


def tile(call: Call, services: Services) -> Response:
    """A tile (``<L>/<N>[.p/<W>]``); never changes once served, so it may be cached long."""
    try:
        name = parse_tile_path(call.path["tile"])
    except ValueError as exc:
        raise NotFound(f"no such tile: {exc}") from None
    body = _log(services).tile(call.tenant, name)
    cache = "public, max-age=31536000, immutable"
    return Response(body, media_type=TILE_MEDIA, headers={"Cache-Control": cache})


def inclusion(call: Call, services: Services) -> InclusionProofResponse:
    """An audit record's inclusion proof."""
    query: InclusionQuery = call.params
    proof = _log(services).inclusion(call.tenant, query.audit_id, query.tree_size)
    return InclusionProofResponse(
        audit_id=proof.audit_id,
        leaf_index=proof.leaf_index,
        tree_size=proof.tree_size,
        hashes=_b64(proof.hashes),
    )


def consistency(call: Call, services: Services) -> ConsistencyProofResponse:
    """A consistency proof between two tree sizes."""
    query: ConsistencyQuery = call.params
    hashes = _log(services).consistency(call.tenant, query.first, query.second)
    return ConsistencyProofResponse(hashes=_b64(hashes))


def keys(call: Call, services: Services) -> LogKeysResponse:
    """The keys that verify the tenant's checkpoints."""
    found = _log(services).public_keys(call.tenant)
    return LogKeysResponse(keys=tuple(LogKey(**key_view(key)) for key in found))


def bundle(call: Call, services: Services) -> AuditBundle:
    """A run's records, keys, checkpoint and every record's inclusion proof."""
    bundles: AuditBundles | None = services.ecp.bundles
    if bundles is None:
        raise NotFound("this server keeps no transparency log (it has no signing key)")
    return bundles.bundle(call.tenant, call.path["run_id"])


def export(call: Call, services: Services) -> AuditExport:
    """A deployment's window of records, every leaf of its log span proved."""
    exports: AuditExports | None = services.ecp.exports
    if exports is None:
        raise NotFound("this server keeps no transparency log (it has no signing key)")
    query: ExportQuery = call.params
    return exports.export(call.tenant, query.deployment_ref, query.since, query.until)


def _read(
    path: str,
    handler: Callable[[Call, Services], object],
    operation_id: str,
    summary: str,
    **more: Any,  # noqa: ANN401 - the rest of Operation's fields, as Operation types them
) -> Operation:
    """A read of the tenant's log: GET, tag ``log``, the ``log_read`` permission."""
    return Operation(
        method="GET",
        path=path,
        handler=handler,
        operation_id=operation_id,
        tag="log",
        summary=summary,
        permission=Permission.LOG_READ,
        **more,
    )


OPERATIONS = [
    _read(
        "/v1/log/checkpoint",
        checkpoint,
        "log_checkpoint",
        "The tenant's newest signed checkpoint (C2SP tlog-checkpoint note)",
        response=str,
        media_type="text/plain",
    ),
    _read(
        "/v1/log/tile/{tile:path}",
        tile,
        "log_tile",
        "A tile of the tenant's log as C2SP tlog-tiles names it: <L>/<N>[.p/<W>]",
        response=bytes,
        media_type=TILE_MEDIA,
        extra_statuses=(404,),
    ),
    _read(
        "/v1/log/proof/inclusion",
        inclusion,
        "log_inclusion_proof",
        "The inclusion proof of an audit record in a tree of the tenant's log",
        response=InclusionProofResponse,
        query=InclusionQuery,
        extra_statuses=(404,),
    ),
    _read(
        "/v1/log/proof/consistency",
        consistency,
        "log_consistency_proof",
        "The consistency proof between two sizes of the tenant's log",
        response=ConsistencyProofResponse,
        query=ConsistencyQuery,
    ),
    _read(
        "/v1/log/keys",
        keys,
        "log_keys",
        "The public keys that verify the tenant's checkpoints",
        response=LogKeysResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/audit/bundle",
        handler=bundle,
        operation_id="audit_bundle",
        tag="audit",
        summary="A run's audit bundle: records, keys, checkpoint and inclusion proofs",
        permission=Permission.AUDIT_READ,
        response=AuditBundle,
        extra_statuses=(404, 409),
    ),
    Operation(
        method="GET",
        path="/v1/log/export",
        handler=export,
        operation_id="audit_export",
        tag="audit",
        summary="A deployment's records over a window, every leaf of its log span proved",
        permission=Permission.AUDIT_READ,
        response=AuditExport,
        query=ExportQuery,
        extra_statuses=(404, 409),
    ),
]
