"""Signing in to the console and out of it, and the console's stylesheet (ADR 0080).

``/console/sign-in`` takes an API key or a JWT once, authenticates it with the API's own
Authenticator, and starts a console session with exactly that credential's tenant and roles.
The key or token is never stored: the session keeps the key's id only, to notice a revocation.
The sign-in form carries a CSRF token bound to a cookie of the browser that fetched it. On a
hosted server, a person logged in there (the ``ecp_session`` cookie) may start a console session
from that login instead, with its tenant and roles.
"""

from starlette.responses import Response

from ecp_core.api_keys.keys import key_id_of
from ecp_core.errors import Unauthenticated
from ecp_core.identity import ActorIdentity
from ecp_http.server.auth import token_expiry
from ecp_http.server.console.browser import (
    CONSOLE_CSP,
    Visit,
    console_page,
    console_sessions,
    home_path,
    redirect,
    signed_in,
)
from ecp_http.server.console_sessions import SIGN_IN_PATH
from ecp_http.server.pages.render import static_file, stylesheet
from ecp_http.server.routing import Call
from ecp_http.server.services import Services

MAX_CREDENTIAL = 8192
"""The longest key or token the form takes (a JWT with many claims fits)."""


def _hosted_actor(services: Services, call: Call) -> ActorIdentity | None:
    """Who the hosted login's live session stands for, if this server has one and it lasts."""
    cloud = services.cloud_identity
    if cloud is None:
        return None
    try:
        return cloud.sessions.actor(call.headers)
    except Unauthenticated:  # broken, or its access token expired: sign in another way
        return None


def _form(
    services: Services, call: Call, *, status: int = 200, error: str | None = None
) -> Response:
    sessions = console_sessions(services)
    token, sealed = sessions.new_sign_in()
    hosted = _hosted_actor(services, call)
    response = console_page(
        "console_sign_in.html",
        status=status,
        csrf_token=token,
        error=error,
        hosted_as=None if hosted is None else hosted.subject,
    )
    sessions.set_sign_in(response, sealed)
    return response


def sign_in_page(call: Call, services: Services) -> Response:
    """The sign-in form: an API key or a JWT, or the hosted login's session when there is one."""
    return _form(services, call)


def _authenticated(services: Services, credential: str) -> tuple[ActorIdentity, str | None]:
    """The credential's actor and, for an API key, its id; Unauthenticated otherwise."""
    key_id = key_id_of(credential)
    if key_id is not None:
        return services.authenticate({"x-api-key": credential}), key_id
    return services.authenticate({"authorization": f"Bearer {credential}"}), None


def sign_in(call: Call, services: Services) -> Response:
    """Check the key or token and start a session; the form again, saying why, when it fails."""
    sessions = console_sessions(services)
    if not sessions.sign_in_valid(call.headers, call.form.get("csrf_token")):
        error = "The form expired or came from elsewhere: try again."
        return _form(services, call, status=403, error=error)
    if call.form.get("use") == "hosted":  # the hosted login's session signs in as well
        hosted = _hosted_actor(services, call)
        if hosted is None:
            return _form(services, call, status=401, error="Your login has ended: log in again.")
        response = redirect(home_path(hosted.roles))
        sessions.start(response, hosted, key_id=None, until=None)
        return response
    credential = call.form.get("credential", "").strip()
    if not credential or len(credential) > MAX_CREDENTIAL or " " in credential:
        return _form(services, call, status=422, error="Paste one API key or one token.")
    try:
        actor, key_id = _authenticated(services, credential)
    except Unauthenticated:
        error = "That key or token is not valid (or revoked)."
        return _form(services, call, status=401, error=error)
    until = None if key_id is not None else token_expiry(credential)
    response = redirect(home_path(actor.roles))
    sessions.start(response, actor, key_id=key_id, until=until)
    return response


def _sign_out(visit: Visit) -> Response:
    """End the session (its form's CSRF token checked)."""
    visit.check_form("sign-out")
    response = redirect(SIGN_IN_PATH)
    visit.sessions.end(response)
    return response


sign_out = signed_in(_sign_out)


def _home(visit: Visit) -> Response:
    """``/console`` is the person's first section (the inbox for approvers)."""
    return redirect(home_path(visit.session.roles))


home = signed_in(_home)


def drawing_script(_: Call, __: Services) -> Response:
    """The drawings' script, shipped in the wheel: pan and zoom of the drawings, nothing needed."""
    response = static_file("drawing.js", "text/javascript")
    response.headers["Content-Security-Policy"] = CONSOLE_CSP
    return response


def console_stylesheet(_: Call, __: Services) -> Response:
    """The console's stylesheet, shipped in the wheel (under the console's policy too)."""
    response = stylesheet("console.css")
    response.headers["Content-Security-Policy"] = CONSOLE_CSP
    return response


__all__ = [
    "console_stylesheet",
    "drawing_script",
    "home",
    "sign_in",
    "sign_in_page",
    "sign_out",
]
