"""Use cases for project API keys: create (shown once), list, revoke, and authenticate."""

import secrets
from collections.abc import Callable
from datetime import datetime

from ecp_core.api_keys import keys
from ecp_core.api_keys.model import (
    ApiKey,
    ApiKeyCreated,
    ApiKeyListResponse,
    ApiKeyView,
    CreateApiKeyRequest,
)
from ecp_core.errors import Conflict, FieldError, NotFound, ValidationFailed
from ecp_core.identity import ActorIdentity
from ecp_core.pages import MAX_PAGE, decode_cursor, encode_cursor
from ecp_core.ports.api_keys import ApiKeysUnit
from ecp_core.ports.system import Clock
from ecp_core.types import AuthMethod
from ecp_core.wire import format_timestamp, parse_timestamp

KEY_ID_ATTEMPTS = 8
"""Fresh key ids tried before giving up (a 40-bit id collides rarely; eight in a row never)."""

SUBJECT_PREFIX = "api-key:"


def _position(cursor: str) -> tuple[datetime, str]:
    moment, key_id = decode_cursor("api_keys", cursor, 2)
    try:
        return parse_timestamp(moment), key_id
    except ValueError as exc:
        raise ValidationFailed(
            "invalid cursor",
            errors=[FieldError(loc=("cursor",), msg="not a cursor this service issued")],
        ) from exc


class ApiKeyService:
    """Project API keys of a tenant: high-entropy, hashed at rest, shown once, one role, revocable.

    ``random_bytes`` is the source of key ids and secrets (``secrets.token_bytes`` by default;
    tests inject a deterministic one).
    """

    def __init__(
        self,
        uow: Callable[[], ApiKeysUnit],
        clock: Clock,
        random_bytes: keys.RandomBytes = secrets.token_bytes,
    ) -> None:
        """Wire the service."""
        self._uow = uow
        self._clock = clock
        self._random_bytes = random_bytes

    def create(self, actor: ActorIdentity, request: CreateApiKeyRequest) -> ApiKeyCreated:
        """Make a key in the actor's tenant; the answer is the only place the key ever appears."""
        with self._uow() as uow:
            for _ in range(KEY_ID_ATTEMPTS):
                key_id = keys.new_key_id(self._random_bytes)
                plaintext = keys.new_key(key_id, self._random_bytes)
                record = ApiKey(
                    key_id=key_id,
                    tenant_id=actor.tenant_id,
                    role=request.role,
                    fingerprint=keys.fingerprint(key_id),
                    key_hash=keys.hash_key(plaintext),
                    name=request.name,
                    created_at=self._clock.now(),
                    created_by=actor.subject,
                )
                try:
                    uow.api_keys.add(record)
                except Conflict:
                    continue
                uow.commit()
                break
            else:
                raise Conflict(f"no free API key id after {KEY_ID_ATTEMPTS} attempts")
        return ApiKeyCreated(
            key_id=record.key_id,
            tenant_id=record.tenant_id,
            role=record.role,
            fingerprint=record.fingerprint,
            name=record.name,
            created_at=record.created_at,
            created_by=record.created_by,
            key=plaintext,
        )

    def list(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> ApiKeyListResponse:
        """A page of the tenant's keys, oldest first, revoked ones included; fingerprints only."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValidationFailed(
                "invalid limit", errors=[FieldError(loc=("limit",), msg=f"must be 1 to {MAX_PAGE}")]
            )
        after = None if cursor is None else _position(cursor)
        with self._uow() as uow:
            found = uow.api_keys.page(tenant_id, limit=limit + 1, after=after)
        page = found[:limit]
        more = len(found) > limit
        return ApiKeyListResponse(
            api_keys=tuple(ApiKeyView.of(key) for key in page),
            next_cursor=(
                encode_cursor("api_keys", format_timestamp(page[-1].created_at), page[-1].key_id)
                if more
                else None
            ),
        )

    def get(self, tenant_id: str, key_id: str) -> ApiKeyView:
        """One key of the tenant; NotFound otherwise (another tenant's key is unknown here)."""
        found = None
        if keys.is_key_id(key_id):
            with self._uow() as uow:
                found = uow.api_keys.get(tenant_id, key_id)
        if found is None:
            raise NotFound(f"API key {key_id!r} not found")
        return ApiKeyView.of(found)

    def revoke(self, tenant_id: str, key_id: str) -> ApiKeyView:
        """Revoke a key for good. Revoking a revoked key succeeds and keeps the first time."""
        if not keys.is_key_id(key_id):
            raise NotFound(f"API key {key_id!r} not found")
        with self._uow() as uow:
            revoked = uow.api_keys.revoke(tenant_id, key_id, self._clock.now())
            if revoked is None:
                raise NotFound(f"API key {key_id!r} not found")
            uow.commit()
        return ApiKeyView.of(revoked)

    def lookup(self, presented: str) -> ActorIdentity | None:
        """The actor a presented key stands for; None when malformed, unknown or revoked.

        The stored hash is compared with the presented key's in constant time.
        """
        key_id = keys.key_id_of(presented)
        if key_id is None:
            return None
        computed = keys.hash_key(presented)
        with self._uow() as uow:
            found = uow.api_keys.by_hash(computed)
        if (
            found is None
            or not keys.same_hash(found.key_hash, computed)
            or found.key_id != key_id
            or found.revoked
        ):
            return None
        return ActorIdentity(
            subject=SUBJECT_PREFIX + found.key_id,
            auth_method=AuthMethod.API_KEY,
            roles=(found.role,),
            tenant_id=found.tenant_id,
        )
