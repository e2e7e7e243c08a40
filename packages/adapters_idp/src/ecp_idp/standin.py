"""A loopback stand-in for WorkOS AuthKit: a real HTTP server on 127.0.0.1 with its own RSA key.

Tests and the local walkthrough log in through it as any organization and role::

    with StandinIdentityProvider(client_id="client_test", api_key="sk_test") as idp:
        idp.next_login = Login(user_id="user_1", organization_id="org_1", roles=("admin",))
        ...  # point ECP_IDP_BASE_URL at idp.url

It speaks the endpoints :mod:`ecp_idp.workos` calls: authorize (redirects back with a code),
authenticate (a code is single use and its PKCE verifier must match the challenge; a refresh
token is single use and its session must be live), the JWKS, and logout (ends the session).
"""

import json
import secrets
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlencode, urlsplit

import attrs
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from ecp_idp.pkce import verifies


@attrs.frozen(kw_only=True)
class Login:
    """Who the next authorization logs in as; ``token_organization_id`` forges another org."""

    user_id: str = "user_standin"
    organization_id: str = "org_standin"
    roles: tuple[str, ...] = ("admin",)
    email: str = "someone@example.com"
    token_organization_id: str | None = None
    """When set, access tokens name this organization instead (a token for another org)."""


@attrs.define
class _Code:
    login: Login
    challenge: str
    used: bool = False


@attrs.define
class _Session:
    login: Login
    live: bool = True


class StandinIdentityProvider:
    """The stand-in server and its state; use as a context manager (or ``start``/``stop``)."""

    def __init__(
        self, *, client_id: str, api_key: str, access_ttl_seconds: int = 300, port: int = 0
    ) -> None:
        """Serve ``client_id`` (authenticated by ``api_key``) on 127.0.0.1:``port`` (0: any)."""
        self.client_id = client_id
        self.api_key = api_key
        self.access_ttl_seconds = access_ttl_seconds
        self.next_login = Login()
        self.next_error: str | None = None
        """When set, the next authorization redirects back with this ``error`` instead of a code."""
        self._codes: dict[str, _Code] = {}
        self._sessions: dict[str, _Session] = {}
        self._refresh_tokens: dict[str, tuple[str, bool]] = {}
        self._lock = threading.Lock()
        self.rotate_key()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``ECP_IDP_BASE_URL``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        """Start serving."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving."""
        self.stop()

    def rotate_key(self) -> None:
        """Sign from now on with a new RSA key (the JWKS publishes only the new one)."""
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "key_" + secrets.token_hex(8)

    def jwks(self) -> dict[str, Any]:
        """The published keys."""
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def access_token(
        self,
        login: Login,
        *,
        session_id: str = "session_none",
        ttl_seconds: int | None = None,
        issuer: str | None = None,
    ) -> str:
        """An access token for ``login``, signed with the current key (by this issuer)."""
        now = int(time.time())
        claims = {
            "iss": issuer or self.url,
            "sub": login.user_id,
            "org_id": login.token_organization_id or login.organization_id,
            "role": login.roles[0] if login.roles else None,
            "roles": list(login.roles),
            "sid": session_id,
            "jti": secrets.token_hex(8),
            "iat": now,
            "exp": now + (self.access_ttl_seconds if ttl_seconds is None else ttl_seconds),
        }
        return jwt.encode(claims, self._key, algorithm="RS256", headers={"kid": self.kid})

    def session_live(self, session_id: str) -> bool:
        """Whether the session has not been logged out."""
        with self._lock:
            found = self._sessions.get(session_id)
            return found is not None and found.live

    def authorize(self, query: Mapping[str, str]) -> tuple[int, dict[str, str]]:
        """Redirect to the redirect URI with a code for :attr:`next_login` (or an error)."""
        required = {"client_id", "redirect_uri", "response_type", "state", "code_challenge"}
        if (
            not required <= query.keys()
            or query["client_id"] != self.client_id
            or query["response_type"] != "code"
            or query.get("code_challenge_method") != "S256"
            or query.get("provider") != "authkit"
        ):
            return 400, {}
        if self.next_error is not None:
            back = {"error": self.next_error, "state": query["state"]}
            self.next_error = None
        else:
            code = secrets.token_urlsafe(24)
            with self._lock:
                self._codes[code] = _Code(login=self.next_login, challenge=query["code_challenge"])
            back = {"code": code, "state": query["state"]}
        return 302, {"Location": f"{query['redirect_uri']}?{urlencode(back)}"}

    def authenticate(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """A code grant or a refresh grant; 400 ``invalid_grant`` for a used or unknown one."""
        if body.get("client_id") != self.client_id or body.get("client_secret") != self.api_key:
            return 401, {"error": "invalid_client"}
        session_id: str | None
        with self._lock:
            if body.get("grant_type") == "authorization_code":
                login = self._take_code(str(body.get("code")), str(body.get("code_verifier")))
                session_id = "session_" + secrets.token_hex(8)
                if login is not None:
                    self._sessions[session_id] = _Session(login=login)
            elif body.get("grant_type") == "refresh_token":
                session_id = self._take_refresh_token(str(body.get("refresh_token")))
                login = None if session_id is None else self._sessions[session_id].login
            else:
                return 400, {"error": "unsupported_grant_type"}
            if login is None or session_id is None:
                return 400, {"error": "invalid_grant"}
            refresh = secrets.token_urlsafe(24)
            self._refresh_tokens[refresh] = (session_id, False)
        return 200, {
            "user": {"object": "user", "id": login.user_id, "email": login.email},
            "organization_id": login.organization_id,
            "access_token": self.access_token(login, session_id=session_id),
            "refresh_token": refresh,
            "authentication_method": "Password",
        }

    def _take_code(self, code: str, verifier: str) -> Login | None:
        found = self._codes.get(code)
        if found is None or found.used:
            return None
        found.used = True  # single use, even when the verifier is wrong
        return found.login if verifies(verifier, found.challenge) else None

    def _take_refresh_token(self, token: str) -> str | None:
        session_id, used = self._refresh_tokens.get(token, ("", True))
        if used or not self._sessions[session_id].live:
            return None
        self._refresh_tokens[token] = (session_id, True)
        return session_id

    def get(
        self, path: str, query: Mapping[str, str]
    ) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        """Answer a GET: status, headers and JSON body."""
        if path == "/user_management/authorize":
            return (*self.authorize(query), None)
        if path == f"/sso/jwks/{self.client_id}":
            return 200, {}, self.jwks()
        if path == "/user_management/sessions/logout":
            return (*self.logout(query), None)
        return 404, {}, {"error": "not_found"}

    def logout(self, query: Mapping[str, str]) -> tuple[int, dict[str, str]]:
        """End the session and redirect to ``return_to`` (200 without one)."""
        with self._lock:
            found = self._sessions.get(query.get("session_id", ""))
            if found is not None:
                found.live = False
        return_to = query.get("return_to")
        return (302, {"Location": return_to}) if return_to else (200, {})


def _handler(idp: StandinIdentityProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {name: values[0] for name, values in parse_qs(parts.query).items()}
            self._answer(*idp.get(parts.path, query))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if urlsplit(self.path).path != "/user_management/authenticate":
                self._answer(404, {}, {"error": "not_found"})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            status, data = idp.authenticate(body if isinstance(body, dict) else {})
            self._answer(status, {}, data)

        def _answer(
            self, status: int, headers: Mapping[str, str], body: Mapping[str, Any] | None = None
        ) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002, ANN401
            """Stay quiet."""

    return Handler


__all__ = ["Login", "StandinIdentityProvider"]
