"""Project API keys: ``ecp_<key id>_<secret>``, 256 random bits, stored only as a SHA-256 hash.

A key is shown once, when created; it acts for one tenant with one role until revoked.
"""

from ecp_core.api_keys.keys import fingerprint, hash_key, key_id_of
from ecp_core.api_keys.model import (
    ApiKey,
    ApiKeyCreated,
    ApiKeyListResponse,
    ApiKeyView,
    CreateApiKeyRequest,
)
from ecp_core.api_keys.service import ApiKeyService

__all__ = [
    "ApiKey",
    "ApiKeyCreated",
    "ApiKeyListResponse",
    "ApiKeyService",
    "ApiKeyView",
    "CreateApiKeyRequest",
    "fingerprint",
    "hash_key",
    "key_id_of",
]
