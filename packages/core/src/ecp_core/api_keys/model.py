"""Project API keys: the stored record and the wire models that never carry its hash."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Text, checked
from ecp_core.types import ServiceRole

DISPLAYABLE = r"[^\x00-\x1f\x7f\ud800-\udfff]*"
"""No control characters and no lone surrogates: a key's name is shown to people, stored as text."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApiKey:
    """A stored project API key: the hash of the key, never the key itself.

    ``fingerprint`` (``ecp_<key_id>``) is the key's non-secret prefix, safe to show and log.
    """

    key_id: Annotated[str, Text(1, 64)]
    tenant_id: Annotated[str, Text(1, 512)]
    role: ServiceRole
    fingerprint: Annotated[str, Text(1, 128)]
    key_hash: Annotated[str, Text(1, 128)]
    name: Annotated[str, Text(1, 200)]
    created_at: Annotated[datetime, AwareUtc()]
    created_by: Annotated[str, Text(1, 512)]
    revoked_at: Annotated[datetime, AwareUtc()] | None = None

    @property
    def revoked(self) -> bool:
        """Whether the key no longer authenticates."""
        return self.revoked_at is not None


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateApiKeyRequest:
    """Body of ``POST /v1/api-keys``: a name for people and the one role the key acts with."""

    name: Annotated[str, Text(1, 200, trimmed=True, pattern=DISPLAYABLE)]
    """A name to tell the key apart (shown in listings)."""
    role: ServiceRole
    """The role every call made with the key will have."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApiKeyView:
    """An API key as listed: its fingerprint, never its hash or the key."""

    key_id: str
    """The API key's id."""
    tenant_id: str
    role: ServiceRole
    """The role every call made with the key has."""
    fingerprint: str
    """A short public fingerprint of the key, to tell keys apart."""
    name: str
    """The name given to the key when it was created."""
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str
    revoked_at: Annotated[datetime, AwareUtc()] | None = None
    """When the key was revoked (RFC 3339, UTC); null while it is valid."""

    @classmethod
    def of(cls, key: ApiKey) -> "ApiKeyView":
        """The public view of a stored key."""
        return cls(
            key_id=key.key_id,
            tenant_id=key.tenant_id,
            role=key.role,
            fingerprint=key.fingerprint,
            name=key.name,
            created_at=key.created_at,
            created_by=key.created_by,
            revoked_at=key.revoked_at,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApiKeyCreated:
    """Answer of ``POST /v1/api-keys``: the record's public fields and, this once, the key."""

    key_id: str
    """The API key's id."""
    tenant_id: str
    role: ServiceRole
    """The role every call made with the key has."""
    fingerprint: str
    """A short public fingerprint of the key, to tell keys apart."""
    name: str
    """The name given to the key."""
    created_at: Annotated[datetime, AwareUtc()]
    created_by: str
    key: str = attrs.field(repr=False)
    """The key itself, shown this once: the service keeps only its hash."""
    revoked_at: Annotated[datetime, AwareUtc()] | None = None
    """When the key was revoked (RFC 3339, UTC); null while it is valid."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApiKeyListResponse:
    """``GET /v1/api-keys``: a page of the tenant's keys in creation order, revoked ones too."""

    api_keys: tuple[ApiKeyView, ...]
    """The tenant's API keys."""
    next_cursor: str | None = None
