"""On a hosted server the hosted login signs in to the console as well (memory store, stand-in IdP).

A person logged in at the identity provider (the ``ecp_session`` cookie) is offered "Continue as"
on the console's sign-in page, and the console session takes that login's tenant and roles.
"""

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.support.cloud_login import HTML, Browser, cloud_app
from tests.support.console import Person, field

from ecp_http.server.console_sessions import CONSOLE_COOKIE
from ecp_idp.standin import Login, StandinIdentityProvider

pytestmark = pytest.mark.integration


@pytest.fixture
def idp() -> Iterator[StandinIdentityProvider]:
    with StandinIdentityProvider(client_id="client_test", api_key="sk_test_standin") as provider:
        yield provider


@pytest.fixture
def client(idp) -> Iterator[TestClient]:
    with TestClient(cloud_app(idp.url, database_url=None)) as test_client:
        yield test_client


@pytest.mark.spec("C15 console-sign-in")
def test_the_hosted_login_signs_in_to_the_console_with_its_tenant_and_roles(client, idp):
    idp.next_login = Login(user_id="user_ann", organization_id="org_console", roles=("approver",))
    hosted = Browser(client)
    assert hosted.log_in(HTML).status_code in (200, 303)
    person = Person(client, dict(hosted.cookies))
    form = person.get("/console/sign-in")
    assert "Continue as user_ann" in form.text
    token = field(form.text, "csrf_token")
    answer = person.post("/console/sign-in", {"csrf_token": token, "use": "hosted"})
    assert (answer.status_code, answer.headers["location"]) == (303, "/console/inbox")
    assert CONSOLE_COOKIE in person.cookies
    inbox = person.get("/console/inbox")
    assert inbox.status_code == 200
    assert "user_ann" in inbox.text and "approver" in inbox.text


@pytest.mark.spec("C15 console-sign-in")
def test_without_a_hosted_login_there_is_nothing_to_continue_with(client):
    person = Person(client)
    form = person.get("/console/sign-in")
    assert "Continue as" not in form.text
    token = field(form.text, "csrf_token")
    answer = person.post("/console/sign-in", {"csrf_token": token, "use": "hosted"})
    assert answer.status_code == 401
    assert CONSOLE_COOKIE not in person.cookies
