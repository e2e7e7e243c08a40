"""The WorkOS AuthKit adapter against the loopback stand-in, over real HTTP."""

import socket
from collections.abc import Iterator

import pytest

from ecp_core.errors import IdentityProviderUnavailable, LoginRejected, UnknownRole
from ecp_core.types import ServiceRole
from ecp_idp import WorkOSAuthKit, challenge_of, new_verifier, verifies
from ecp_idp.standin import Login, StandinIdentityProvider

pytestmark = pytest.mark.integration

CLIENT_ID = "client_test"
API_KEY = "sk_test"
LOGIN = Login(user_id="user_1", organization_id="org_1", roles=("approver", "viewer"))


@pytest.fixture
def idp() -> Iterator[StandinIdentityProvider]:
    with StandinIdentityProvider(client_id=CLIENT_ID, api_key=API_KEY) as server:
        yield server


def provider(base_url: str, **options) -> WorkOSAuthKit:
    return WorkOSAuthKit(
        base_url=base_url,
        client_id=CLIENT_ID,
        api_key=API_KEY,
        redirect_uri="http://127.0.0.1/callback",
        **options,
    )


def test_pkce_s256_matches_rfc_7636_appendix_b():
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # the RFC's example
    assert challenge_of(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert verifies(verifier, challenge_of(verifier))
    assert not verifies(new_verifier(), challenge_of(verifier))


@pytest.mark.spec("C6 provider-adapters", "§5 hosted-identity")
def test_a_token_is_verified_against_the_jwks_and_names_organization_and_roles(idp):
    identity = provider(idp.url).verify(
        idp.access_token(LOGIN, session_id="session_1"), organization_id="org_1"
    )
    assert (identity.provider, identity.organization_id, identity.user_id) == (
        "workos",
        "org_1",
        "user_1",
    )
    assert identity.roles == (ServiceRole.APPROVER, ServiceRole.VIEWER)
    assert identity.session_id == "session_1"


@pytest.mark.spec("§5 hosted-identity")
def test_tokens_of_another_issuer_organization_or_time_are_refused(idp):
    checked = provider(idp.url)
    with pytest.raises(LoginRejected, match="another organization"):
        checked.verify(idp.access_token(LOGIN), organization_id="org_2")
    with pytest.raises(LoginRejected, match="expired"):
        checked.verify(idp.access_token(LOGIN, ttl_seconds=-10), organization_id=None)
    with pytest.raises(LoginRejected, match="no organization"):
        checked.verify(
            idp.access_token(Login(organization_id="", token_organization_id="")),
            organization_id=None,
        )
    with pytest.raises(LoginRejected):
        checked.verify("not a token", organization_id=None)
    with StandinIdentityProvider(client_id=CLIENT_ID, api_key=API_KEY) as impostor:
        forged = impostor.access_token(LOGIN)
    with pytest.raises(LoginRejected, match="does not publish"):
        checked.verify(forged, organization_id=None)
    with pytest.raises(LoginRejected, match="issuer"):
        checked.verify(idp.access_token(LOGIN, issuer="https://elsewhere"), organization_id=None)
    with pytest.raises(UnknownRole):
        checked.verify(idp.access_token(Login(roles=("member",))), organization_id=None)


def test_an_unknown_key_id_makes_the_jwks_be_read_again(idp):
    checked = provider(idp.url, jwks_refetch_seconds=0)
    checked.verify(idp.access_token(LOGIN), organization_id=None)
    idp.rotate_key()
    assert checked.verify(idp.access_token(LOGIN), organization_id=None).user_id == "user_1"


def test_refetching_is_rate_limited_for_made_up_key_ids(idp):
    checked = provider(idp.url, jwks_refetch_seconds=3600)
    checked.verify(idp.access_token(LOGIN), organization_id=None)
    idp.rotate_key()  # within the interval, the new key id is not looked up again
    with pytest.raises(LoginRejected, match="does not publish"):
        checked.verify(idp.access_token(LOGIN), organization_id=None)


def test_an_unreachable_provider_is_unavailable_not_a_refusal(idp):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    down = provider(f"http://127.0.0.1:{port}")
    with pytest.raises(IdentityProviderUnavailable):
        down.authenticate(code="c", code_verifier=new_verifier())
    with pytest.raises(IdentityProviderUnavailable):
        down.verify(idp.access_token(LOGIN), organization_id=None)


def test_a_wrong_client_secret_is_the_services_problem_not_the_users(idp):
    wrong = WorkOSAuthKit(
        base_url=idp.url, client_id=CLIENT_ID, api_key="sk_wrong", redirect_uri="http://x/cb"
    )
    with pytest.raises(IdentityProviderUnavailable):
        wrong.authenticate(code="c", code_verifier=new_verifier())
