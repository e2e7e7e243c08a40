"""The console in tests: an app on the memory store, people who sign in, and their forms.

Each :class:`Person` keeps their own cookies and sends them by hand, so several sessions share one
app (and one test client) without seeing each other's cookies.
"""

import base64
import re
import secrets
from collections.abc import Iterator
from http.cookies import SimpleCookie
from typing import Any

import attrs
import httpx
from starlette.responses import Response
from starlette.testclient import TestClient
from tests.support.statements import statements

from ecp_core.identity import ActorIdentity
from ecp_core.memory import MemoryStore
from ecp_core.system import SystemClock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app

SECRET = "console-tests-" + "s" * 32
WAIT = {"Prefer": "wait=10"}


def console_settings(**changes: Any) -> Settings:
    """Settings of a test server whose console cookies travel over plain HTTP."""
    fields: dict[str, Any] = {
        "jwt_secret": SECRET,
        "audit_signing_key": base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        "insecure_cookies": True,
        **changes,
    }
    return Settings(**fields)


def console_client(**changes: Any) -> Iterator[TestClient]:
    """A test client of an app on the memory store, its run workers on."""
    with TestClient(create_app(console_settings(**changes), storage=MemoryStore())) as client:
        yield client


def bearer(tenant: str, *roles: str, subject: str = "tester") -> dict[str, str]:
    """API headers of a token for ``tenant`` with ``roles``."""
    return {
        "Authorization": "Bearer "
        + mint_token(SECRET, tenant=tenant, roles=list(roles), subject=subject)
    }


def reviewed(graph_id: str, *, sla_seconds: int | None = None, **rules: Any) -> dict[str, Any]:
    """``review`` (an approval node) → ``done``."""
    node: dict[str, Any] = {
        "id": "review",
        "kind": "approval",
        "summary": "Pay the supplier",
        "rationale": "Payments over the limit need a person",
        **rules,
    }
    if sla_seconds is not None:
        node["sla_seconds"] = sla_seconds
    return {
        "graph_id": graph_id,
        "entry": "review",
        "nodes": [node, {"id": "done", "kind": "end"}],
        "edges": [{"source": "review", "target": "done"}],
    }


def deployed(client: TestClient, admin: dict[str, str], ref: str, **options: Any) -> None:
    """Register and deploy :func:`reviewed` as ``ref``."""
    assert (
        client.post("/v1/graphs", json=reviewed(ref, **options), headers=admin).status_code == 201
    )
    body = {"deployment_ref": ref, "graph_id": ref}
    assert client.post("/v1/deployments", json=body, headers=admin).status_code == 201


def waiting_run(
    client: TestClient, admin: dict[str, str], ref: str, payload: dict[str, Any] | None = None
) -> tuple[str, str]:
    """Start a run of ``ref``; its id and its pending approval's, once it waits."""
    body = {"deployment_ref": ref, "input": payload or {"supplier": "ACME", "amount": 1200}}
    run = client.post("/runs", json=body, headers={**admin, **WAIT}).json()
    assert run["status"] == "waiting_approval", run
    return run["run_id"], run["pending_approval_ids"][0]


def api_key(client: TestClient, admin: dict[str, str], role: str) -> tuple[str, str]:
    """A new API key of the admin's tenant with ``role``: its plaintext and its id."""
    made = client.post("/v1/api-keys", json={"name": f"{role} key", "role": role}, headers=admin)
    assert made.status_code == 201, made.text
    return made.json()["key"], made.json()["key_id"]


def field(html: str, name: str, action: str | None = None) -> str:
    """The value of hidden field ``name`` (in the form posting to ``action``, when given)."""
    scope = html
    if action is not None:
        start = html.find(f'action="{action}"')
        assert start >= 0, f"no form posting to {action}"
        scope = html[start : html.find("</form>", start)]
    found = re.search(rf'name="{name}" value="([^"]*)"', scope)
    assert found is not None, f"no field {name}"
    return found.group(1).replace("&#34;", '"').replace("&quot;", '"').replace("&amp;", "&")


@attrs.define
class Person:
    """One browser: its cookies, sent by hand."""

    client: TestClient
    cookies: dict[str, str] = attrs.field(factory=dict)

    def _keep(self, response: httpx.Response) -> httpx.Response:
        for header in response.headers.get_list("set-cookie"):
            parsed: SimpleCookie = SimpleCookie()
            parsed.load(header)
            for name, morsel in parsed.items():
                if morsel["max-age"] == "0" or not morsel.value or morsel.value == '""':
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return response

    def _headers(self) -> dict[str, str]:
        self.client.cookies.clear()
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        return {"Cookie": cookie} if cookie else {}

    def get(self, path: str, **params: str) -> httpx.Response:
        """GET ``path`` as this browser (redirects not followed)."""
        response = self.client.get(
            path, params=params or None, headers=self._headers(), follow_redirects=False
        )
        return self._keep(response)

    def post(self, path: str, fields: dict[str, str]) -> httpx.Response:
        """Post a form to ``path`` as this browser (redirects not followed)."""
        response = self.client.post(
            path, data=fields, headers=self._headers(), follow_redirects=False
        )
        return self._keep(response)

    def sign_in(self, credential: str) -> httpx.Response:
        """Fetch the sign-in form and submit ``credential`` with its token."""
        form = self.get("/console/sign-in")
        assert form.status_code == 200
        token = field(form.text, "csrf_token")
        return self.post("/console/sign-in", {"csrf_token": token, "credential": credential})


def sealed_session(secret: str, tenant: str, role: ServiceRole = ServiceRole.APPROVER) -> str:
    """A ``Cookie`` header value holding a console session of ``role`` in ``tenant``, sealed as
    the server seals one (to call page handlers on the test's own thread)."""
    sessions = ConsoleSessions(secret, hours=1, secure=False, clock=SystemClock())
    actor = ActorIdentity(
        subject="counted", auth_method=AuthMethod.BEARER, roles=(role,), tenant_id=tenant
    )
    response = Response()
    sessions.start(response, actor, key_id=None, until=None)
    value = response.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    return f"{CONSOLE_COOKIE}={value}"


def page_statements(
    services: Any,
    handler: Any,
    tenant: str,
    params: object = None,
    *,
    role: ServiceRole = ServiceRole.ADMIN,
    **path: str,
) -> tuple[int, int]:
    """The statements a console page sends (COMMIT aside) and its status, called on this thread
    with a sealed session of ``role`` in ``tenant``: the pages' "no query per row" tests."""
    cookie = sealed_session(services.settings.jwt_secret, tenant, role)
    call = Call(actor=None, path=path, params=params, headers={"cookie": cookie})
    with statements() as seen:
        answer = handler(call, services)
    return len([s for s in seen if s != "COMMIT"]), answer.status_code


def signed_in(client: TestClient, credential: str) -> Person:
    """A browser signed in with ``credential``."""
    person = Person(client)
    answer = person.sign_in(credential)
    landing = answer.headers.get("location", "")
    assert answer.status_code == 303 and landing.startswith("/console/"), answer.text
    assert "sign-in" not in landing, answer.text
    return person


__all__ = [
    "SECRET",
    "Person",
    "api_key",
    "bearer",
    "console_client",
    "console_settings",
    "deployed",
    "field",
    "page_statements",
    "reviewed",
    "sealed_session",
    "signed_in",
    "waiting_run",
]
