"""Hosted login with the identity provider: login, callback, refresh and logout.

``login`` starts the authorization code flow with PKCE S256 (state and verifier in the sealed
10-minute login cookie); ``callback`` checks the state, exchanges the code, verifies the access
token, binds (and on the first login activates) the organization's tenant, and opens the sealed
session. A browser (``Accept: text/html``) gets the one-time activation page or is sent on to its
account; an API caller gets JSON. Every unexpected callback is a 4xx problem that changes nothing.
Routes exist only while ``ECP_IDP_AUTHKIT_ENABLED`` is set.
"""

import hmac
import secrets
from typing import Annotated

import attrs
from starlette.responses import JSONResponse, RedirectResponse, Response

from ecp_core.accounts import SignIn, VerifiedIdentity
from ecp_core.api_keys import ApiKeyCreated
from ecp_core.constraints import Text, checked
from ecp_core.errors import LoginRejected, Unauthenticated
from ecp_core.types import ServiceRole
from ecp_core.wire import unstructure
from ecp_http.server.pages.render import PAGE_HEADERS, page
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.server.sessions import AUTH_PATH, CloudIdentity, LoginState, Session
from ecp_idp.pkce import challenge_of, new_verifier

TAG = "cloud-auth"
ACCOUNT_PATH = "/account"
NO_STORE = {"Cache-Control": "no-store"}
QueryText = Annotated[str, Text(1, 4096)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class CallbackQuery:
    """What the provider sends back: a code and the state, or an error."""

    code: QueryText | None = None
    state: QueryText | None = None
    error: QueryText | None = None
    error_description: QueryText | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class SessionView:
    """Who the session stands for: its tenant, organization, user and roles."""

    tenant_id: str
    organization_id: str
    """The organization the user signed in with."""
    user_id: str
    """The signed-in user's id."""
    roles: tuple[ServiceRole, ...]
    """The roles the session has."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class LoginResponse:
    """The callback's JSON answer; ``quickstart_key`` only for the activating login, once."""

    session: SessionView
    """Who the session stands for."""
    activated: bool
    """Whether this login activated the tenant."""
    quickstart_key: ApiKeyCreated | None = None
    """An API key made for the activating login, shown this once; null otherwise."""


def _identity(services: Services) -> CloudIdentity:
    found = services.cloud_identity
    if found is None:  # the routes are only served while identity is enabled
        raise LoginRejected("hosted login is not enabled")
    return found


def _wants_html(call: Call) -> bool:
    return "text/html" in call.headers.get("accept", "")


def _view(session: Session) -> SessionView:
    return SessionView(
        tenant_id=session.tenant_id,
        organization_id=session.organization_id,
        user_id=session.user_id,
        roles=session.roles,
    )


def _session(identity: VerifiedIdentity, tenant_id: str, access: str, refresh: str) -> Session:
    return Session(
        tenant_id=tenant_id,
        organization_id=identity.organization_id,
        user_id=identity.user_id,
        roles=identity.roles,
        access_expires_at=identity.expires_at,
        session_id=identity.session_id,
        access_token=access,
        refresh_token=refresh,
    )


def login(_: Call, services: Services) -> Response:
    """Redirect to the provider's login with a fresh state and PKCE challenge."""
    cloud = _identity(services)
    started = LoginState(state=secrets.token_urlsafe(32), verifier=new_verifier())
    target = cloud.provider.authorization_url(
        state=started.state, code_challenge=challenge_of(started.verifier)
    )
    response = RedirectResponse(target, status_code=303, headers=NO_STORE)
    cloud.sessions.start_login(response, started)
    return response


def _signed_in(call: Call, cloud: CloudIdentity, services: Services) -> tuple[SignIn, Session]:
    """The callback's checks in order; LoginRejected or UnknownRole before anything is stored."""
    query: CallbackQuery = call.params
    if query.error is not None:
        raise LoginRejected(f"the identity provider refused the login: {query.error}")
    started = cloud.sessions.login(call.headers)
    if query.state is None or not hmac.compare_digest(
        query.state.encode("utf-8"), started.state.encode("utf-8")
    ):
        raise LoginRejected("the state does not match the login in progress: log in again")
    if query.code is None:
        raise LoginRejected("the callback carries no code")
    tokens = cloud.provider.authenticate(code=query.code, code_verifier=started.verifier)
    if tokens.organization_id is None:
        raise LoginRejected("the login names no organization: sign in to an organization")
    identity = cloud.provider.verify(tokens.access_token, organization_id=tokens.organization_id)
    signed = services.ecp.accounts.sign_in(identity)
    return signed, _session(identity, signed.tenant_id, tokens.access_token, tokens.refresh_token)


def callback(call: Call, services: Services) -> Response:
    """Finish the login: bind and activate the tenant, open the session, answer page or JSON."""
    cloud = _identity(services)
    signed, session = _signed_in(call, cloud, services)
    key = signed.quickstart_key
    response: Response
    if not _wants_html(call):
        body = LoginResponse(session=_view(session), activated=signed.activated, quickstart_key=key)
        response = JSONResponse(unstructure(body), headers=NO_STORE)
    elif key is not None:
        response = page(
            "key_shown.html",
            heading="Your account is ready",
            plaintext=key.key,
            role=key.role.value,
            fingerprint=key.fingerprint,
            origin=cloud.browser_origin,
        )
    else:
        response = RedirectResponse(ACCOUNT_PATH, status_code=303, headers=PAGE_HEADERS)
    cloud.sessions.end_login(response)
    cloud.sessions.open(response, session)
    return response


def refresh(call: Call, services: Services) -> Response:
    """Renew the session's tokens with its refresh token (single use), in its organization.

    The new access token must name the session's organization, whose tenant must be the one the
    session holds; roles are read again, so a role changed at the provider applies now.
    """
    cloud = _identity(services)
    current = cloud.sessions.session(call.headers)
    if current is None:
        raise Unauthenticated("no session to refresh: log in")
    tokens = cloud.provider.refresh(
        refresh_token=current.refresh_token, organization_id=current.organization_id
    )
    identity = cloud.provider.verify(tokens.access_token, organization_id=current.organization_id)
    if services.ecp.accounts.tenant_of(identity.provider, identity.organization_id) != (
        current.tenant_id
    ):
        raise LoginRejected("the session's organization is not bound to its tenant: log in again")
    renewed = _session(identity, current.tenant_id, tokens.access_token, tokens.refresh_token)
    response: Response
    if _wants_html(call):
        response = RedirectResponse(ACCOUNT_PATH, status_code=303, headers=NO_STORE)
    else:
        response = JSONResponse(unstructure(_view(renewed)), headers=NO_STORE)
    cloud.sessions.open(response, renewed)
    return response


def logout(call: Call, services: Services) -> Response:
    """Clear the session and end the provider's session too (then back to the landing page)."""
    cloud = _identity(services)
    home = cloud.browser_origin + "/"
    try:
        current = cloud.sessions.session(call.headers)
    except Unauthenticated:
        current = None  # a broken cookie is cleared all the same
    target = home
    if current is not None and current.session_id is not None:
        target = cloud.provider.logout_url(session_id=current.session_id, return_to=home)
    response = RedirectResponse(target, status_code=303, headers=NO_STORE)
    cloud.sessions.close(response)
    return response


OPERATIONS = [
    Operation(
        method="GET",
        path=f"{AUTH_PATH}/login",
        handler=login,
        operation_id="cloud_auth_login",
        tag=TAG,
        summary="Start login at the identity provider (authorization code with PKCE S256)",
        permission=None,
        public=True,
        status=303,
    ),
    Operation(
        method="GET",
        path=f"{AUTH_PATH}/callback",
        handler=callback,
        operation_id="cloud_auth_callback",
        tag=TAG,
        summary="Finish login: check state and token, bind the organization's tenant, open the"
        " session; the first login activates a trial and shows an Analyst key once",
        permission=None,
        public=True,
        query=CallbackQuery,
        response=LoginResponse,
        extra_statuses=(303, 400, 403, 502),
    ),
    Operation(
        method="GET",
        path=f"{AUTH_PATH}/refresh",
        handler=refresh,
        operation_id="cloud_auth_refresh",
        tag=TAG,
        summary="Renew the session's access token with its refresh token",
        permission=None,
        public=True,
        response=SessionView,
        extra_statuses=(303, 400, 401, 502),
    ),
    Operation(
        method="GET",
        path=f"{AUTH_PATH}/logout",
        handler=logout,
        operation_id="cloud_auth_logout",
        tag=TAG,
        summary="Clear the session and end it at the identity provider",
        permission=None,
        public=True,
        status=303,
    ),
]
