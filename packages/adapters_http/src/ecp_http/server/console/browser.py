"""What every console page shares: its headers, the signed-in visit, CSRF checks, error pages.

Each console page handler takes a :class:`Visit`: the request, the services, and the console
session read afresh (sealed, unexpired, its API key still active). Without one the browser is
sent to sign in. A core error becomes an HTML page with the API's status for it (403, 404, 409
...), never a 5xx for what a browser sent. Permissions are the API's own (one table).
"""

from collections.abc import Callable, Iterable
from typing import Any

import attrs
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ecp_core.errors import EcpError, Forbidden, NotFound
from ecp_core.identity import ActorIdentity
from ecp_core.permissions import Permission, permissions_of
from ecp_core.types import ServiceRole
from ecp_http.server.console_sessions import (
    SIGN_IN_PATH,
    ConsoleSession,
    ConsoleSessions,
    SessionEnded,
)
from ecp_http.server.pages.render import render
from ecp_http.server.problems import STATUS_BY_CODE
from ecp_http.server.routing import Call
from ecp_http.server.services import Services

CONSOLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Scripts, styles and connections from this origin only (no inline script or style), never
framed (ADR 0080)."""
CONSOLE_HEADERS = {
    "Content-Security-Policy": CONSOLE_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Sent with every console response."""
STYLESHEET = "/console/static/console.css"
DRAWING_SCRIPT = "/console/static/drawing.js"
"""The console's one script: pan and zoom of the drawings, an enhancement only."""
INBOX_PATH = "/console/inbox"


@attrs.frozen
class Section:
    """One place of the console's navigation, shown to those whose roles grant ``permission``."""

    key: str
    label: str
    path: str
    permission: Permission


SECTIONS = (
    Section("inbox", "Inbox", INBOX_PATH, Permission.APPROVAL_READ),
    Section("runs", "Runs", "/console/runs", Permission.RUN_READ),
    Section("deployments", "Deployments", "/console/deployments", Permission.GRAPH_READ),
    Section("tasks", "Tasks", "/console/tasks", Permission.TASK_READ),
    Section("webhooks", "Webhooks", "/console/webhooks", Permission.WEBHOOK_ADMIN),
    Section("economics", "Economics", "/console/economics", Permission.DEBUGGER_READ),
    Section("audit", "Audit", "/console/audit", Permission.AUDIT_READ),
)
"""The console's sections, in the navigation's order."""


def sections_for(roles: Iterable[ServiceRole]) -> list[Section]:
    """The sections ``roles`` may read (the API's permission table decides)."""
    granted = permissions_of(frozenset(roles))
    return [section for section in SECTIONS if section.permission in granted]


def home_path(roles: Iterable[ServiceRole]) -> str:
    """Where a person lands after signing in: their first section (the inbox for approvers)."""
    sections = sections_for(roles)
    return sections[0].path if sections else INBOX_PATH


def console_page(template: str, *, status: int = 200, **context: Any) -> HTMLResponse:  # noqa: ANN401
    """``template`` rendered with ``context`` and the console's headers."""
    html = render(template, stylesheet=STYLESHEET, drawing_script=DRAWING_SCRIPT, **context)
    return HTMLResponse(html, status_code=status, headers=CONSOLE_HEADERS)


def redirect(location: str) -> RedirectResponse:
    """A 303 to ``location`` with the console's headers (a form post is answered so)."""
    return RedirectResponse(location, status_code=303, headers=CONSOLE_HEADERS)


def console_sessions(services: Services) -> ConsoleSessions:
    """The console's sessions (the composition root always builds them for a served app)."""
    if services.console is None:
        raise NotFound("the console is not served here")
    return services.console


@attrs.frozen(kw_only=True)
class Visit:
    """One signed-in request to the console."""

    call: Call
    services: Services
    sessions: ConsoleSessions
    session: ConsoleSession

    def may(self, permission: Permission) -> bool:
        """Whether the session's roles grant ``permission`` (the API's table)."""
        return permission in permissions_of(self.session.roles)

    def actor(self, permission: Permission) -> ActorIdentity:
        """The session's caller when its roles grant ``permission``; Forbidden otherwise."""
        if not self.may(permission):
            raise Forbidden(f"this needs the {permission.value} permission")
        return self.session.actor()

    def csrf(self, form: str) -> str:
        """The CSRF token of ``form`` in this session."""
        return self.sessions.csrf(self.session, form)

    def check_form(self, form: str) -> None:
        """Forbidden unless the post carries this session's token for ``form``."""
        if not self.sessions.csrf_valid(self.session, form, self.call.form.get("csrf_token")):
            raise Forbidden(
                "the form's CSRF token is missing or not this session's: reload the page"
            )

    def page(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:  # noqa: ANN401
        """A console page with the header's context: who is signed in, the sign-out form."""
        return console_page(
            template,
            status=status,
            tenant=self.session.tenant_id,
            subject=self.session.subject,
            roles=", ".join(role.value for role in self.session.roles),
            sign_out_token=self.csrf("sign-out"),
            sections=sections_for(self.session.roles),
            expires_at=self.session.expires_at.strftime("%Y-%m-%d %H:%M UTC"),
            **context,
        )


def error_page(error: EcpError, visit: Visit | None = None) -> HTMLResponse:
    """The page for a core error, with the status the API gives it."""
    status = STATUS_BY_CODE.get(error.code, 400)
    details = [
        f"{'.'.join(str(part) for part in found.loc) or 'the form'}: {found.msg}"
        for found in getattr(error, "errors", ())
    ]
    context = {
        "error_status": status,
        "code": error.code,
        "message": str(error),
        "details": details,
    }
    if visit is None:
        return console_page("console_error.html", status=status, signed_in=False, **context)
    return visit.page("console_error.html", status=status, signed_in=True, **context)


def live_session(services: Services, sessions: ConsoleSessions, call: Call) -> ConsoleSession:
    """The request's session; SessionEnded unless it opens, lasts, and its key is still active."""
    session = sessions.session(call.headers)
    if session.key_id is not None:
        try:
            key = services.ecp.api_keys.get(session.tenant_id, session.key_id)
        except NotFound as exc:
            raise SessionEnded("the API key of this session is gone") from exc
        if key.revoked_at is not None:
            raise SessionEnded("the API key of this session was revoked")
    return session


def signed_in(
    handler: Callable[[Visit], Response], *, ended: Callable[[], Response] | None = None
) -> Callable[[Call, Services], Response]:
    """A console page handler that needs a live session; otherwise the browser signs in.

    ``ended`` answers instead of the redirect to sign in (the live stream's 204).
    """

    def serve(call: Call, services: Services) -> Response:
        sessions = console_sessions(services)
        try:
            session = live_session(services, sessions, call)
        except SessionEnded:
            away = redirect(SIGN_IN_PATH) if ended is None else ended()
            sessions.end(away)
            return away
        visit = Visit(call=call, services=services, sessions=sessions, session=session)
        try:
            return handler(visit)
        except EcpError as error:
            return error_page(error, visit)

    serve.__name__ = handler.__name__
    serve.__doc__ = handler.__doc__
    return serve


__all__ = [
    "CONSOLE_CSP",
    "CONSOLE_HEADERS",
    "DRAWING_SCRIPT",
    "INBOX_PATH",
    "SECTIONS",
    "STYLESHEET",
    "Section",
    "Visit",
    "console_page",
    "console_sessions",
    "error_page",
    "home_path",
    "live_session",
    "redirect",
    "sections_for",
    "signed_in",
]
