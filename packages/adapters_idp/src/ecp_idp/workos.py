"""The identity provider port over WorkOS AuthKit's user-management API (CONTRACT "Hosted offer").

- ``GET /user_management/authorize``: where the browser logs in (``provider=authkit``, PKCE S256).
- ``POST /user_management/authenticate``: a code and its verifier, or a refresh token, for tokens
  (the client id and the API key as client secret).
- ``GET /sso/jwks/<client id>``: the keys that sign the RS256 access tokens.
- ``GET /user_management/sessions/logout``: ends the provider's session, then returns.

The access token's ``org_id`` is the organization that owns the tenant; its ``roles`` (or
``role``) are read with :func:`ecp_core.accounts.provider_roles`.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt

from ecp_core.accounts import ProviderTokens, VerifiedIdentity, provider_roles
from ecp_core.errors import IdentityProviderUnavailable, LoginRejected
from ecp_idp.jwks import JwksCache

PROVIDER = "workos"
ALGORITHM = "RS256"
TIMEOUT_SECONDS = 10.0
"""How long one call to the provider may take."""

_REFUSED = 400
"""The status of the provider's refusals of a grant (``invalid_grant`` and the like)."""


def _text(claims: Mapping[str, Any], name: str) -> str | None:
    value = claims.get(name)
    return value if isinstance(value, str) and value else None


def _role_slugs(claims: Mapping[str, Any]) -> list[str]:
    """The token's role slugs: its ``roles`` list, else its single ``role``."""
    roles = claims.get("roles")
    if isinstance(roles, list) and all(isinstance(slug, str) for slug in roles):
        return list(roles)
    if roles is not None:
        raise LoginRejected("the access token's roles claim is not a list of slugs")
    role = _text(claims, "role")
    return [] if role is None else [role]


class WorkOSAuthKit:
    """WorkOS AuthKit as an :class:`~ecp_core.ports.accounts.IdentityProvider`."""

    name = PROVIDER

    def __init__(
        self,
        *,
        base_url: str,
        client_id: str,
        api_key: str,
        redirect_uri: str,
        http: httpx.Client | None = None,
        jwks_refetch_seconds: float = 30.0,
    ) -> None:
        """Talk to ``base_url`` (no trailing slash) as ``client_id``; ``http`` is closed by us."""
        self._base = base_url.rstrip("/")
        self._client_id = client_id
        self._api_key = api_key
        self._redirect_uri = redirect_uri
        self._http = http or httpx.Client(timeout=TIMEOUT_SECONDS)
        self._issuers = (self._base, self._base + "/")
        self._jwks = JwksCache(self._fetch_jwks, min_refetch_seconds=jwks_refetch_seconds)

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()

    def authorization_url(self, *, state: str, code_challenge: str) -> str:
        """AuthKit's hosted login, coming back to the redirect URI with a code and ``state``."""
        query = {
            "client_id": self._client_id,
            "redirect_uri": self._redirect_uri,
            "response_type": "code",
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            "provider": "authkit",
        }
        return f"{self._base}/user_management/authorize?{urlencode(query)}"

    def authenticate(self, *, code: str, code_verifier: str) -> ProviderTokens:
        """Exchange a code (single use) and its PKCE verifier for tokens."""
        return self._grant(
            {"grant_type": "authorization_code", "code": code, "code_verifier": code_verifier}
        )

    def refresh(self, *, refresh_token: str, organization_id: str) -> ProviderTokens:
        """New tokens for a refresh token (single use) in the session's organization."""
        return self._grant(
            {
                "grant_type": "refresh_token",
                "refresh_token": refresh_token,
                "organization_id": organization_id,
            }
        )

    def verify(self, access_token: str, *, organization_id: str | None) -> VerifiedIdentity:
        """The claims of a token signed by a published key, from this issuer, not expired.

        The token must name an organization, ``organization_id`` when given, and known roles.
        """
        try:
            kid = jwt.get_unverified_header(access_token).get("kid")
        except jwt.PyJWTError as exc:
            raise LoginRejected(f"the access token is not a JWT: {exc}") from exc
        if not isinstance(kid, str) or not kid:
            raise LoginRejected("the access token names no signing key")
        try:
            claims = jwt.decode(
                access_token,
                self._jwks.key(kid),
                algorithms=[ALGORITHM],
                issuer=self._issuers,
                options={"require": ["exp", "iss", "sub"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            raise LoginRejected(f"the access token is invalid: {exc}") from exc
        audience = claims.get("aud")
        if audience is not None and self._client_id not in (
            audience if isinstance(audience, list) else [audience]
        ):
            raise LoginRejected("the access token was issued for another client")
        organization = _text(claims, "org_id")
        if organization is None:
            raise LoginRejected("the access token names no organization")
        if organization_id is not None and organization != organization_id:
            raise LoginRejected("the access token is for another organization")
        subject = _text(claims, "sub")
        if subject is None:
            raise LoginRejected("the access token names no user")
        return VerifiedIdentity(
            provider=PROVIDER,
            organization_id=organization,
            user_id=subject,
            roles=provider_roles(_role_slugs(claims)),
            expires_at=datetime.fromtimestamp(int(claims["exp"]), UTC),
            session_id=_text(claims, "sid"),
        )

    def logout_url(self, *, session_id: str, return_to: str) -> str:
        """AuthKit's session end, coming back to ``return_to``."""
        query = urlencode({"session_id": session_id, "return_to": return_to})
        return f"{self._base}/user_management/sessions/logout?{query}"

    def _grant(self, grant: Mapping[str, str]) -> ProviderTokens:
        body = {"client_id": self._client_id, "client_secret": self._api_key, **grant}
        answer = self._call("POST", "/user_management/authenticate", json=body)
        if answer.status_code == _REFUSED:
            raise LoginRejected(f"the identity provider refused the grant: {_reason(answer)}")
        data = _json(answer)
        access, refresh = data.get("access_token"), data.get("refresh_token")
        if not isinstance(access, str) or not access or not isinstance(refresh, str) or not refresh:
            raise IdentityProviderUnavailable("the identity provider's answer has no tokens")
        return ProviderTokens(
            access_token=access,
            refresh_token=refresh,
            organization_id=_text(data, "organization_id"),
        )

    def _fetch_jwks(self) -> Mapping[str, Any]:
        return _json(self._call("GET", f"/sso/jwks/{self._client_id}"))

    def _call(self, method: str, path: str, **options: Any) -> httpx.Response:  # noqa: ANN401
        try:
            return self._http.request(method, self._base + path, **options)
        except httpx.HTTPError as exc:
            raise IdentityProviderUnavailable(
                f"the identity provider cannot be reached: {type(exc).__name__}"
            ) from exc


def _reason(answer: httpx.Response) -> str:
    try:
        data = answer.json()
    except ValueError:
        return "no reason given"
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, str) and error else "no reason given"


def _json(answer: httpx.Response) -> dict[str, Any]:
    """The JSON object of a 2xx answer; IdentityProviderUnavailable for anything else."""
    if not answer.is_success:
        raise IdentityProviderUnavailable(
            f"the identity provider answered {answer.status_code} ({_reason(answer)})"
        )
    try:
        data = answer.json()
    except ValueError as exc:
        raise IdentityProviderUnavailable("the identity provider answered with no JSON") from exc
    if not isinstance(data, dict):
        raise IdentityProviderUnavailable("the identity provider answered with no JSON object")
    return data


__all__ = ["PROVIDER", "WorkOSAuthKit"]
