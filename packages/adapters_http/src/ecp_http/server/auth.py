"""Who is calling: ``Authorization: Bearer <JWT>`` (HS256), ``X-API-Key``, or a hosted session.

A bearer token is verified once (signature, claims) and then remembered until it expires
(ADR 0064): a client sends the same token with every request, and its verification was the
largest part of a read's server time. Only tokens that verified are remembered, so an unknown
token costs a full verification every time, as before.
"""

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import jwt

from ecp_core.errors import Unauthenticated
from ecp_core.identity import ActorIdentity
from ecp_core.types import AuthMethod, ServiceRole

ApiKeyLookup = Callable[[str], ActorIdentity | None]
"""Finds the actor a presented API key stands for (None: unknown or revoked)."""

SessionLookup = Callable[[Mapping[str, str]], ActorIdentity | None]
"""Finds the actor a request's session cookie stands for (None: no session cookie); raises
Unauthenticated for a cookie that does not open or whose access token expired."""

_ROLES = {role.value: role for role in ServiceRole}
ALGORITHM = "HS256"
VERIFIED_TOKENS = 4096
"""How many verified bearer tokens an authenticator remembers (the oldest is forgotten first)."""


def _roles(claim: Any) -> tuple[ServiceRole, ...]:  # noqa: ANN401 - a JWT claim
    if not isinstance(claim, list) or not all(isinstance(item, str) for item in claim):
        raise Unauthenticated("the token's roles must be a list of role slugs")
    unknown = [item for item in claim if item not in _ROLES]
    if unknown:
        raise Unauthenticated(f"the token names unknown roles: {', '.join(unknown)}")
    return tuple(_ROLES[item] for item in claim)


class _VerifiedTokens:
    """Tokens that verified, each with its actor and the moments it is valid from and until.

    A token is valid from its ``iat`` (and ``nbf``) up to, not including, its ``exp``: the same
    window PyJWT checks. Outside it, the token is verified again, which gives the same error as
    the first time would have.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._known: dict[str, tuple[ActorIdentity, float, float]] = {}
        self._lock = threading.Lock()

    def get(self, token: str) -> ActorIdentity | None:
        """The actor of ``token`` while it is known and valid now; else None."""
        known = self._known.get(token)
        if known is None:
            return None
        actor, valid_from, expires = known
        return actor if valid_from <= time.time() < expires else None

    def add(self, token: str, actor: ActorIdentity, claims: Mapping[str, Any]) -> None:
        """Remember a token that verified with ``claims`` (times read as PyJWT reads them)."""
        valid_from = max(int(claims["iat"]), int(claims.get("nbf", claims["iat"])))
        expires = int(claims["exp"])
        with self._lock:
            if token not in self._known and len(self._known) >= self._size:
                del self._known[next(iter(self._known))]
            self._known[token] = (actor, valid_from, expires)


class Authenticator:
    """Turns request headers into an ActorIdentity, or raises Unauthenticated."""

    def __init__(
        self,
        jwt_secret: str,
        api_keys: ApiKeyLookup | None = None,
        sessions: SessionLookup | None = None,
        *,
        remembered_tokens: int = VERIFIED_TOKENS,
    ) -> None:
        """Verify bearer tokens with ``jwt_secret``; look API keys up with ``api_keys``.

        ``sessions`` (hosted login) reads the ``ecp_session`` cookie of a request that sends
        neither an API key nor an ``Authorization`` header. Up to ``remembered_tokens`` bearer
        tokens that verified are remembered until they expire.
        """
        self._secret = jwt_secret
        self._api_keys = api_keys
        self._sessions = sessions
        self._verified = _VerifiedTokens(remembered_tokens)

    def __call__(self, headers: Mapping[str, str]) -> ActorIdentity:
        """The caller, from ``X-API-Key``, ``Authorization: Bearer`` or the session cookie."""
        key = headers.get("x-api-key")
        if key:
            actor = self._api_keys(key) if self._api_keys is not None else None
            if actor is None:
                raise Unauthenticated("the API key is unknown or revoked")
            return actor
        authorization = headers.get("authorization", "")
        if not authorization and self._sessions is not None:
            actor = self._sessions(headers)
            if actor is not None:
                return actor
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("send Authorization: Bearer <token> or X-API-Key")
        return self.verify_token(token.strip())

    def verify_token(self, token: str) -> ActorIdentity:
        """The actor a valid token names (a token seen before is not verified again)."""
        actor = self._verified.get(token)
        if actor is not None:
            return actor
        try:
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                options={"require": ["sub", "tenant_id", "exp", "iat"]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the token is invalid: {exc}") from exc
        tenant, subject = claims["tenant_id"], claims["sub"]
        if not isinstance(tenant, str) or not tenant or not isinstance(subject, str) or not subject:
            raise Unauthenticated("the token's sub and tenant_id must be non-empty strings")
        workspace = claims.get("workspace_id")
        actor = ActorIdentity(
            subject=subject,
            auth_method=AuthMethod.BEARER,
            roles=_roles(claims.get("roles", [])),
            tenant_id=tenant,
            workspace_id=workspace if isinstance(workspace, str) else None,
        )
        self._verified.add(token, actor, claims)
        return actor


def token_expiry(token: str) -> datetime:
    """When a token that :meth:`Authenticator.verify_token` accepted expires (its ``exp``)."""
    claims = jwt.decode(token, options={"verify_signature": False})
    return datetime.fromtimestamp(int(claims["exp"]), UTC)


def mint_token(
    secret: str,
    *,
    tenant: str,
    roles: list[str],
    subject: str = "developer",
    ttl_seconds: int = 3600,
    workspace: str | None = None,
) -> str:
    """A development token (``ecp token``); unknown role slugs are refused."""
    _roles(roles)
    now = int(time.time())
    claims: dict[str, Any] = {
        "sub": subject,
        "tenant_id": tenant,
        "roles": roles,
        "iat": now,
        "exp": now + ttl_seconds,
    }
    if workspace is not None:
        claims["workspace_id"] = workspace
    return jwt.encode(claims, secret, algorithm=ALGORITHM)
