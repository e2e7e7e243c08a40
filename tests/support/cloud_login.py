"""A hand-driven browser for the hosted login: cookies kept by hand, redirects followed by hand.

The app runs in process (Starlette's TestClient, an httpx client); the identity provider is the
real loopback stand-in (:mod:`ecp_idp.standin`), reached over HTTP.
"""

import base64
import secrets
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

import httpx
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.hosted import HostedSettings, IdentitySettings
from ecp_http.config.settings import Settings
from ecp_http.startup.app import create_app

CLIENT_ID = "client_test"
IDP_API_KEY = "sk_test_standin"
COOKIE_PASSWORD = "a-cookie-password-of-at-least-32-chars"
ORIGIN = "http://testserver"
CALLBACK = "/v1/cloud/auth/callback"
HTML = {"Accept": "text/html,application/xhtml+xml"}


def cloud_app(idp_url: str, *, database_url: str | None):
    """The app with hosted login against the stand-in at ``idp_url`` (memory when no URL)."""
    settings = Settings(
        database_url=database_url,
        jwt_secret="x" * 32,
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        hosted=HostedSettings(
            identity=IdentitySettings(
                enabled=True,
                client_id=CLIENT_ID,
                api_key=IDP_API_KEY,
                redirect_uri=ORIGIN + CALLBACK,
                cookie_password=COOKIE_PASSWORD,
                browser_origin=ORIGIN,
                base_url=idp_url,
                allow_insecure_cookies=True,
            )
        ),
    )
    storage = MemoryStore() if database_url is None else None
    return create_app(settings, start_workers=False, storage=storage)


class Browser:
    """Sends the cookies it was given (by name), follows nothing on its own."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.cookies: dict[str, str] = {}

    def keep(self, response: httpx.Response) -> None:
        for header in response.headers.get_list("set-cookie"):
            parsed = SimpleCookie()
            parsed.load(header)
            for name, morsel in parsed.items():
                if morsel["max-age"] == "0":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value

    def get(self, url: str, headers: dict[str, str] | None = None) -> httpx.Response:
        self.client.cookies.clear()
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        sent = {**(headers or {}), **({"Cookie": cookie} if cookie else {})}
        response = self.client.get(url, headers=sent, follow_redirects=False)
        self.keep(response)
        return response

    def start_login(self) -> str:
        """Start a login and let the provider answer: the callback's path and query."""
        started = self.get("/v1/cloud/auth/login")
        assert started.status_code == 303, started.text
        answered = httpx.get(started.headers["location"], follow_redirects=False)
        assert answered.status_code == 302, answered.text
        back = urlsplit(answered.headers["location"])
        assert back.path == CALLBACK
        return f"{back.path}?{back.query}"

    def log_in(self, headers: dict[str, str] | None = None) -> httpx.Response:
        """A whole login: the callback's answer."""
        return self.get(self.start_login(), headers)
