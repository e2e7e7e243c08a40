"""Project API keys: create (the key is in this answer only), list by fingerprint, revoke."""

from ecp_core.api_keys import ApiKeyCreated, ApiKeyListResponse, ApiKeyView, CreateApiKeyRequest
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import PageQuery

TAG = "api-keys"
NO_STORE = {"Cache-Control": "no-store"}
"""The answer that carries a key must not be kept by caches."""


def create_api_key(call: Call, services: Services) -> Reply:
    """Create a key; the answer is the only place it is ever shown."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    created = services.ecp.api_keys.create(call.actor, call.body)
    return Reply(body=created, status=201, headers=NO_STORE)


def list_api_keys(call: Call, services: Services) -> ApiKeyListResponse:
    """A page of the tenant's keys, by fingerprint."""
    query: PageQuery = call.params
    return services.ecp.api_keys.list(call.tenant, limit=query.limit, cursor=query.cursor)


def revoke_api_key(call: Call, services: Services) -> ApiKeyView:
    """Revoke a key (the first revocation is kept)."""
    return services.ecp.api_keys.revoke(call.tenant, call.path["key_id"])


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/api-keys",
        handler=create_api_key,
        operation_id="api_keys_create",
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
        operation_id="api_keys_list",
        tag=TAG,
        summary="The tenant's API keys in creation order, revoked ones too; fingerprints only",
        permission=Permission.API_KEY_ADMIN,
        response=ApiKeyListResponse,
        query=PageQuery,
    ),
    Operation(
        method="DELETE",
        path="/v1/api-keys/{key_id}",
        handler=revoke_api_key,
        operation_id="api_keys_revoke",
        tag=TAG,
        summary="Revoke an API key; revoking a revoked key answers the same, first time kept",
        permission=Permission.API_KEY_ADMIN,
        response=ApiKeyView,
    ),
]
