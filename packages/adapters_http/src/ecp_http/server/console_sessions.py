"""Console sessions: the sealed ``ecp_console`` cookie and the sign-in form's own cookie (ADR 0080).

A session is started once from an API key or a JWT that the API's Authenticator accepted. The
cookie holds who signed in (tenant, subject, roles, how), the API key's id when it was one (so
that a revoked key ends its sessions at their next request), a random session id (the CSRF
tokens' binding) and, inside the sealed box, its expiry: ``ECP_CONSOLE_SESSION_HOURS`` after the
sign-in, or the JWT's own expiry when that comes first. It is sealed with a key derived from the
server's ``ECP_JWT_SECRET`` for this purpose alone, HttpOnly, SameSite=Strict, sent to
``/console`` only, and Secure unless ``ECP_CLOUD_ALLOW_INSECURE_COOKIES`` (loopback tests).
"""

import secrets
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import attrs
from starlette.responses import Response

from ecp_core.identity import ActorIdentity
from ecp_core.ports.system import Clock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.server.pages.csrf import csrf_token, csrf_valid
from ecp_http.server.sealing import SealBroken, Sealer, derive_key
from ecp_http.server.sessions import cookie

CONSOLE_COOKIE = "ecp_console"
SIGN_IN_COOKIE = "ecp_console_sign_in"
"""Binds the sign-in form's CSRF token to the browser that fetched the form."""
CONSOLE_PATH = "/console"
SIGN_IN_PATH = CONSOLE_PATH + "/sign-in"
SIGN_IN_TTL = timedelta(hours=1)
"""How long a fetched sign-in form may be submitted."""


class SessionEnded(Exception):
    """The request's console session is missing, broken, expired or its key was revoked."""


@attrs.frozen(kw_only=True)
class ConsoleSession:
    """What the console cookie holds: who is signed in, for which tenant, until when."""

    tenant_id: str
    subject: str
    roles: tuple[ServiceRole, ...]
    auth_method: AuthMethod
    workspace_id: str | None
    key_id: str | None
    """The API key it was started with (checked on every request), or None for a JWT."""
    session_id: str = attrs.field(repr=False)
    """Random: what the session's CSRF tokens are bound to."""
    expires_at: datetime

    def actor(self) -> ActorIdentity:
        """The caller this session stands for: exactly the credential's tenant and roles."""
        return ActorIdentity(
            subject=self.subject,
            auth_method=self.auth_method,
            roles=self.roles,
            tenant_id=self.tenant_id,
            workspace_id=self.workspace_id,
        )

    def sealable(self) -> dict[str, object]:
        """The session as JSON (short keys: a cookie holds 4 KB); the seal holds the expiry too."""
        return {
            "x": int(self.expires_at.timestamp()),
            "t": self.tenant_id,
            "u": self.subject,
            "r": [role.value for role in self.roles],
            "m": self.auth_method.value,
            "w": self.workspace_id,
            "k": self.key_id,
            "i": self.session_id,
        }

    @classmethod
    def of(cls, data: Mapping[str, object]) -> "ConsoleSession":
        """The session :meth:`sealable` wrote (KeyError, TypeError or ValueError otherwise)."""
        roles, workspace, key_id, expires = data["r"], data["w"], data["k"], data["x"]
        if not isinstance(roles, list) or not isinstance(expires, int):
            raise TypeError("a session's roles are a list and its expiry a number")
        return cls(
            tenant_id=str(data["t"]),
            subject=str(data["u"]),
            roles=tuple(ServiceRole(str(role)) for role in roles),
            auth_method=AuthMethod(str(data["m"])),
            workspace_id=None if workspace is None else str(workspace),
            key_id=None if key_id is None else str(key_id),
            session_id=str(data["i"]),
            expires_at=datetime.fromtimestamp(expires, UTC),
        )


class ConsoleSessions:
    """Starts, reads and ends console sessions; makes and checks their CSRF tokens."""

    def __init__(self, secret: str, *, hours: float, secure: bool, clock: Clock) -> None:
        """Seal under keys derived from ``secret``; sessions last ``hours``."""
        self._sealer = Sealer(secret, "ecp console session")
        self._sign_in = Sealer(secret, "ecp console sign-in")
        self._csrf_key = derive_key(secret, "ecp console csrf")
        self._ttl = timedelta(hours=hours)
        self._secure = secure
        self._clock = clock

    def start(
        self,
        response: Response,
        actor: ActorIdentity,
        *,
        key_id: str | None,
        until: datetime | None,
    ) -> ConsoleSession:
        """Set the cookie of a new session for ``actor`` (ending no later than ``until``)."""
        now = self._clock.now()
        expires_at = now + self._ttl if until is None else min(now + self._ttl, until)
        session = ConsoleSession(
            tenant_id=actor.tenant_id,
            subject=actor.subject,
            roles=actor.roles,
            auth_method=actor.auth_method,
            workspace_id=actor.workspace_id,
            key_id=key_id,
            session_id=secrets.token_urlsafe(24),
            expires_at=expires_at,
        )
        sealed = self._sealer.seal(session.sealable(), expires_at=expires_at)
        seconds = max(1, int((expires_at - now).total_seconds()))
        self._set(response, CONSOLE_COOKIE, sealed, seconds, CONSOLE_PATH)
        response.delete_cookie(
            SIGN_IN_COOKIE, path=SIGN_IN_PATH, secure=self._secure, httponly=True, samesite="strict"
        )
        return session

    def session(self, headers: Mapping[str, str]) -> ConsoleSession:
        """The request's session; SessionEnded when there is none that opens and lasts."""
        sealed = cookie(headers, CONSOLE_COOKIE)
        if sealed is None:
            raise SessionEnded("not signed in")
        try:
            data = self._sealer.unseal(sealed, now=self._clock.now())
        except SealBroken as exc:
            raise SessionEnded(f"the session is over ({exc})") from exc
        try:
            return ConsoleSession.of(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionEnded("the session cookie is not valid") from exc

    def end(self, response: Response) -> None:
        """Remove the session cookie."""
        response.delete_cookie(
            CONSOLE_COOKIE, path=CONSOLE_PATH, secure=self._secure, httponly=True, samesite="strict"
        )

    def csrf(self, session: ConsoleSession, form: str) -> str:
        """The token of ``form`` in ``session``."""
        return csrf_token(self._csrf_key, session.session_id, form)

    def csrf_valid(self, session: ConsoleSession, form: str, token: str | None) -> bool:
        """Whether ``token`` is ``form``'s in ``session``."""
        return csrf_valid(self._csrf_key, session.session_id, form, token)

    def new_sign_in(self) -> tuple[str, str]:
        """A sign-in form's CSRF token and the sealed cookie value it is bound to."""
        nonce = secrets.token_urlsafe(24)
        sealed = self._sign_in.seal({"n": nonce}, expires_at=self._clock.now() + SIGN_IN_TTL)
        return csrf_token(self._csrf_key, nonce, "sign-in"), sealed

    def set_sign_in(self, response: Response, sealed: str) -> None:
        """Set the cookie :meth:`new_sign_in` sealed (sent to the sign-in route only)."""
        self._set(response, SIGN_IN_COOKIE, sealed, int(SIGN_IN_TTL.total_seconds()), SIGN_IN_PATH)

    def sign_in_valid(self, headers: Mapping[str, str], token: str | None) -> bool:
        """Whether ``token`` is the one of the sign-in form this browser fetched."""
        sealed = cookie(headers, SIGN_IN_COOKIE)
        if sealed is None:
            return False
        try:
            nonce = self._sign_in.unseal(sealed, now=self._clock.now()).get("n")
        except SealBroken:
            return False
        return isinstance(nonce, str) and csrf_valid(self._csrf_key, nonce, "sign-in", token)

    def _set(self, response: Response, name: str, value: str, seconds: int, path: str) -> None:
        response.set_cookie(
            name,
            value,
            max_age=seconds,
            path=path,
            secure=self._secure,
            httponly=True,
            samesite="strict",
        )


__all__ = [
    "CONSOLE_COOKIE",
    "CONSOLE_PATH",
    "SIGN_IN_COOKIE",
    "SIGN_IN_PATH",
    "ConsoleSession",
    "ConsoleSessions",
    "SessionEnded",
]
