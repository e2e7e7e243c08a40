"""Hosted browser sessions: the sealed ``ecp_session`` cookie and the 10-minute login cookie.

Both cookies are sealed (:mod:`ecp_http.server.sealing`) under keys derived from
``ECP_IDP_COOKIE_PASSWORD``, HttpOnly, SameSite=Lax and Secure (unless
``ECP_CLOUD_ALLOW_INSECURE_COOKIES`` for loopback tests). The login cookie holds the OAuth state
and the PKCE verifier and is sent only to ``/v1/cloud/auth``; the session cookie holds the tenant,
the roles and the provider's tokens. A session authenticates while its access token is unexpired;
then ``/v1/cloud/auth/refresh`` renews it with the refresh token (ADR 0034).
"""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

import attrs
from starlette.requests import cookie_parser
from starlette.responses import Response

from ecp_core.errors import LoginRejected, Unauthenticated
from ecp_core.identity import ActorIdentity
from ecp_core.ports.accounts import IdentityProvider
from ecp_core.ports.system import Clock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.sealing import SealBroken, Sealer, derive_key

SESSION_COOKIE = "ecp_session"
LOGIN_COOKIE = "ecp_login"
AUTH_PATH = "/v1/cloud/auth"
"""The login cookie is sent to these routes only."""
LOGIN_TTL = timedelta(minutes=10)
"""How long a started login may take (CONTRACT "Hosted offer")."""
SESSION_TTL = timedelta(days=7)
"""How long a session may be refreshed before the person logs in again."""
REFRESH_PATH = AUTH_PATH + "/refresh"


@attrs.frozen(kw_only=True)
class Session:
    """What the session cookie holds: who is signed in, for which tenant, and the tokens."""

    tenant_id: str
    organization_id: str
    user_id: str
    roles: tuple[ServiceRole, ...]
    access_expires_at: datetime
    session_id: str | None = None
    access_token: str = attrs.field(repr=False)
    refresh_token: str = attrs.field(repr=False)

    def actor(self) -> ActorIdentity:
        """The caller this session stands for (a bearer of the provider's access token)."""
        return ActorIdentity(
            subject=self.user_id,
            auth_method=AuthMethod.BEARER,
            roles=self.roles,
            tenant_id=self.tenant_id,
        )

    def sealable(self) -> dict[str, object]:
        """The session as JSON (short keys: a cookie holds 4 KB)."""
        return {
            "t": self.tenant_id,
            "o": self.organization_id,
            "u": self.user_id,
            "r": [role.value for role in self.roles],
            "x": int(self.access_expires_at.timestamp()),
            "s": self.session_id,
            "a": self.access_token,
            "f": self.refresh_token,
        }

    @classmethod
    def of(cls, data: Mapping[str, object]) -> "Session":
        """The session :meth:`sealable` wrote (KeyError, TypeError or ValueError otherwise)."""
        roles = data["r"]
        expires = data["x"]
        if not isinstance(roles, list) or not isinstance(expires, int):
            raise TypeError("a session's roles are a list and its expiry a number")
        session_id = data["s"]
        return cls(
            tenant_id=str(data["t"]),
            organization_id=str(data["o"]),
            user_id=str(data["u"]),
            roles=tuple(ServiceRole(role) for role in roles),
            access_expires_at=datetime.fromtimestamp(expires, UTC),
            session_id=None if session_id is None else str(session_id),
            access_token=str(data["a"]),
            refresh_token=str(data["f"]),
        )


@attrs.frozen(kw_only=True)
class LoginState:
    """What the login cookie holds between the redirect to the provider and the callback."""

    state: str = attrs.field(repr=False)
    verifier: str = attrs.field(repr=False)


def cookie(headers: Mapping[str, str], name: str) -> str | None:
    """The value of cookie ``name`` in the request headers, or None."""
    return cookie_parser(headers.get("cookie", "")).get(name) or None


class CloudSessions:
    """Writes and reads the sealed login and session cookies."""

    def __init__(self, cookie_password: str, *, secure: bool, clock: Clock) -> None:
        """Seal under keys derived from ``cookie_password``; ``secure`` sets the Secure flag."""
        self._login = Sealer(cookie_password, "ecp login state")
        self._session = Sealer(cookie_password, "ecp session")
        self.csrf_key = derive_key(cookie_password, "ecp csrf")
        """The key of the pages' CSRF tokens (:mod:`ecp_http.server.pages.csrf`)."""
        self._secure = secure
        self._clock = clock

    def start_login(self, response: Response, login: LoginState) -> None:
        """Set the login cookie (10 minutes, sent to the auth routes only)."""
        sealed = self._login.seal(
            {"state": login.state, "verifier": login.verifier},
            expires_at=self._clock.now() + LOGIN_TTL,
        )
        self._set(response, LOGIN_COOKIE, sealed, LOGIN_TTL, AUTH_PATH)

    def login(self, headers: Mapping[str, str]) -> LoginState:
        """The login in progress; LoginRejected when none is (missing, expired or tampered)."""
        sealed = cookie(headers, LOGIN_COOKIE)
        if sealed is None:
            raise LoginRejected("no login is in progress here (no login cookie): log in again")
        try:
            data = self._login.unseal(sealed, now=self._clock.now())
        except SealBroken as exc:
            raise LoginRejected(f"the login cookie is not valid ({exc}): log in again") from exc
        state, verifier = data.get("state"), data.get("verifier")
        if not isinstance(state, str) or not isinstance(verifier, str):
            raise LoginRejected("the login cookie is not valid: log in again")
        return LoginState(state=state, verifier=verifier)

    def end_login(self, response: Response) -> None:
        """Remove the login cookie."""
        self._clear(response, LOGIN_COOKIE, AUTH_PATH)

    def open(self, response: Response, session: Session) -> None:
        """Set the session cookie."""
        sealed = self._session.seal(session.sealable(), expires_at=self._clock.now() + SESSION_TTL)
        self._set(response, SESSION_COOKIE, sealed, SESSION_TTL, "/")

    def session(self, headers: Mapping[str, str]) -> Session | None:
        """The request's session, expired access token or not; None without a session cookie.

        Unauthenticated when the cookie does not open (tampered, another key's, or too old).
        """
        sealed = cookie(headers, SESSION_COOKIE)
        if sealed is None:
            return None
        try:
            return Session.of(self._session.unseal(sealed, now=self._clock.now()))
        except SealBroken as exc:
            raise Unauthenticated(f"the session cookie is not valid ({exc}): log in again") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise Unauthenticated("the session cookie is not valid: log in again") from exc

    def close(self, response: Response) -> None:
        """Remove the session cookie."""
        self._clear(response, SESSION_COOKIE, "/")

    def actor(self, headers: Mapping[str, str]) -> ActorIdentity | None:
        """The caller a session cookie stands for, while its access token lasts; None without one."""
        session = self.session(headers)
        if session is None:
            return None
        if self._clock.now() >= session.access_expires_at:
            raise Unauthenticated(f"the session's access token expired: renew it at {REFRESH_PATH}")
        return session.actor()

    def _set(self, response: Response, name: str, value: str, ttl: timedelta, path: str) -> None:
        response.set_cookie(
            name,
            value,
            max_age=int(ttl.total_seconds()),
            path=path,
            secure=self._secure,
            httponly=True,
            samesite="lax",
        )

    def _clear(self, response: Response, name: str, path: str) -> None:
        response.delete_cookie(name, path=path, secure=self._secure, httponly=True, samesite="lax")


@attrs.frozen(kw_only=True)
class CloudIdentity:
    """What the hosted login routes use: the provider, the cookies, where the browser lives."""

    provider: IdentityProvider
    sessions: CloudSessions
    browser_origin: str
    """``ECP_CLOUD_BROWSER_ORIGIN``: where the pages are served (logout returns there)."""
    close: Callable[[], None] = lambda: None
    """Releases the provider's connections."""


__all__ = [
    "LOGIN_COOKIE",
    "LOGIN_TTL",
    "SESSION_COOKIE",
    "SESSION_TTL",
    "CloudIdentity",
    "CloudSessions",
    "LoginState",
    "Session",
    "cookie",
]
