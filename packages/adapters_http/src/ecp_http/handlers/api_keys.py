"""Project API keys: create (the key is in this answer only), list by fingerprint, revoke."""

from typing import TYPE_CHECKING

from ecp_core.api_keys import ApiKeyCreated, ApiKeyListResponse, ApiKeyView, CreateApiKeyRequest
from ecp_core.pages import MAX_PAGE
from ecp_core.permissions import Permission
from ecp_http.handlers.common import int_query
from ecp_http.routing import Call, Operation, QueryParam, Reply

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "api-keys"
NO_STORE = {"Cache-Control": "no-store"}
"""The answer that carries a key must not be kept by caches."""


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    ecp = runtime.ecp

    def create_api_key(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        return Reply(body=ecp.api_keys.create(call.actor, call.body), status=201, headers=NO_STORE)

    def list_api_keys(call: Call) -> ApiKeyListResponse:
        limit = int_query(call.query, "limit", 50, 1, MAX_PAGE)
        return ecp.api_keys.list(call.tenant, limit=limit, cursor=call.query.get("cursor"))

    def revoke_api_key(call: Call) -> ApiKeyView:
        return ecp.api_keys.revoke(call.tenant, call.path["key_id"])

    return [
        Operation(
            method="POST",
            path="/v1/api-keys",
            handler=create_api_key,
            tag=TAG,
            summary="Create a project API key for one role; the key is shown in this answer only",
            permission=Permission.API_KEY_ADMIN,
            body=CreateApiKeyRequest,
            response=ApiKeyCreated,
            status=201,
        ),
        Operation(
            method="GET",
            path="/v1/api-keys",
            handler=list_api_keys,
            tag=TAG,
            summary="The tenant's API keys in creation order, revoked ones too; fingerprints only",
            permission=Permission.API_KEY_ADMIN,
            response=ApiKeyListResponse,
            query=(
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
        ),
        Operation(
            method="DELETE",
            path="/v1/api-keys/{key_id}",
            handler=revoke_api_key,
            tag=TAG,
            summary="Revoke an API key; revoking a revoked key answers the same, first time kept",
            permission=Permission.API_KEY_ADMIN,
            response=ApiKeyView,
        ),
    ]
