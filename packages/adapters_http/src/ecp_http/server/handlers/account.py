"""``/account`` and its forms: plan status, meter usage, key fingerprints, checkout and portal.

Checkout and portal answer a page of our own that links (and forwards) to the merchant: the
contract's ``form-action 'self'`` forbids a form post that redirects to another origin.

Browser pages, authenticated by the ``ecp_session`` cookie only: no session sends the browser to
login, an expired access token to the refresh route (which comes back here). Every form carries
a CSRF token bound to the session and the form (ADR 0036); the role checks are the API's own
(``billing_checkout`` for checkout and portal, ``api_key_admin`` for keys). The page never shows
a stored key or payment data: keys appear by fingerprint, and a replaced key's new plaintext is
shown once, on the page that answers the replacement.
"""

from collections.abc import Callable
from typing import Any

from starlette.responses import RedirectResponse, Response

from ecp_core.api_keys.model import ApiKeyView, CreateApiKeyRequest
from ecp_core.billing.model import CheckoutRequest, PlanName, SubscriptionStatus
from ecp_core.entitlements.model import AccountUsage, Meter
from ecp_core.errors import Forbidden, Unauthenticated
from ecp_core.identity import ActorIdentity
from ecp_core.permissions import Permission, permissions_of
from ecp_http.server.pages.csrf import csrf_token, csrf_valid
from ecp_http.server.pages.render import PAGE_HEADERS, page
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.server.sessions import AUTH_PATH, REFRESH_PATH, CloudIdentity, Session

TAG = "pages"
ACCOUNT_PATH = "/account"
LOGIN_PATH = AUTH_PATH + "/login"
LOGOUT_PATH = AUTH_PATH + "/logout"
METER_LABELS = {
    Meter.INGESTED_EVENTS: "Ingested evidence events",
    Meter.DECISION_SCANS: "Version-decision scans",
    Meter.HOSTED_BACKTESTS: "Hosted model backtests",
    Meter.PROVIDER_CALL_CREDITS: "Provider-call credits",
    Meter.SCHEDULES: "Decision schedules (live)",
}


class _Elsewhere(Exception):
    """The browser must go to ``location`` first (login or refresh)."""

    def __init__(self, location: str) -> None:
        self.location = location


def _redirect(location: str) -> RedirectResponse:
    return RedirectResponse(location, status_code=303, headers=PAGE_HEADERS)


def _cloud(services: Services) -> CloudIdentity:
    cloud = services.cloud_identity
    if cloud is None:  # the routes are only served while identity is enabled
        raise Unauthenticated("hosted login is not enabled")
    return cloud


def _session(call: Call, cloud: CloudIdentity) -> Session:
    """The browser's live session; _Elsewhere to login (none, broken) or refresh (expired)."""
    try:
        session = cloud.sessions.session(call.headers)
    except Unauthenticated as exc:  # a cookie that does not open: log in afresh
        raise _Elsewhere(LOGIN_PATH) from exc
    if session is None:
        raise _Elsewhere(LOGIN_PATH)
    try:
        cloud.sessions.actor(call.headers)
    except Unauthenticated as exc:  # the access token expired: renew it, then come back
        raise _Elsewhere(REFRESH_PATH) from exc
    return session


def _binding(session: Session) -> str:
    """What the CSRF tokens are bound to: the provider's session, else the signed-in user."""
    return session.session_id or f"{session.organization_id}/{session.user_id}"


def _may(session: Session, permission: Permission) -> bool:
    return permission in permissions_of(session.roles)


def _browser(
    handler: Callable[[Call, Services, CloudIdentity, Session], Response],
) -> Callable[[Call, Services], Response]:
    """A page handler that needs a live session; otherwise the browser goes to login or refresh."""

    def serve(call: Call, services: Services) -> Response:
        cloud = _cloud(services)
        try:
            session = _session(call, cloud)
        except _Elsewhere as away:
            return _redirect(away.location)
        return handler(call, services, cloud, session)

    serve.__name__ = handler.__name__
    serve.__doc__ = handler.__doc__
    return serve


def _form_checked(call: Call, cloud: CloudIdentity, session: Session, form: str) -> None:
    """Forbidden unless the post carries this session's token for ``form``."""
    if not csrf_valid(
        cloud.sessions.csrf_key, _binding(session), form, call.form.get("csrf_token")
    ):
        raise Forbidden("the form's CSRF token is missing or not this session's: reload the page")


def _key_rows(
    services: Services, cloud: CloudIdentity, session: Session
) -> list[dict[str, object]]:
    if not _may(session, Permission.API_KEY_ADMIN):
        return []
    keys: list[ApiKeyView] = []
    cursor: str | None = None
    while True:
        listed = services.ecp.api_keys.list(session.tenant_id, limit=500, cursor=cursor)
        keys.extend(listed.api_keys)
        cursor = listed.next_cursor
        if cursor is None:
            break
    binding = _binding(session)
    return [
        {
            "key_id": key.key_id,
            "name": key.name,
            "role": key.role.value,
            "fingerprint": key.fingerprint,
            "revocable": key.revoked_at is None,
            "csrf_replace": csrf_token(cloud.sessions.csrf_key, binding, f"replace:{key.key_id}"),
            "csrf_revoke": csrf_token(cloud.sessions.csrf_key, binding, f"revoke:{key.key_id}"),
        }
        for key in keys
    ]


def _plan_context(usage: AccountUsage | None) -> dict[str, Any]:
    if usage is None:
        return {
            "plan_label": "No plan",
            "status_label": "no subscription",
            "period_start": None,
            "period_end": None,
            "entitled": False,
            "meters": [],
        }
    return {
        "plan_label": usage.plan.value.capitalize(),
        "status_label": usage.status.value.replace("_", " "),
        "period_start": usage.period_start.strftime("%Y-%m-%d %H:%M"),
        "period_end": usage.period_end.strftime("%Y-%m-%d %H:%M"),
        "entitled": usage.entitled,
        "meters": [
            {"label": METER_LABELS[r.meter], "used": f"{r.used:,}", "allowance": f"{r.allowance:,}"}
            for r in usage.meters
        ],
    }


def _account(_: Call, services: Services, cloud: CloudIdentity, session: Session) -> Response:
    """The account page."""
    usage = services.ecp.account_usage(session.tenant_id)
    billing = services.ecp.billing is not None and _may(session, Permission.BILLING_CHECKOUT)
    paid = usage is not None and usage.plan is not PlanName.TRIAL
    live = usage is not None and usage.status is SubscriptionStatus.ACTIVE and paid
    key, binding = cloud.sessions.csrf_key, _binding(session)
    return page(
        "account.html",
        logout_url=LOGOUT_PATH,
        can_checkout=billing and not live,
        can_open_portal=billing and paid,
        csrf={form: csrf_token(key, binding, form) for form in ("checkout", "portal")},
        keys=_key_rows(services, cloud, session),
        **_plan_context(usage),
    )


def _checkout(call: Call, services: Services, cloud: CloudIdentity, session: Session) -> Response:
    """Start the merchant's checkout of the Solo plan (the browser goes there; nothing changes)."""
    _form_checked(call, cloud, session, "checkout")
    actor = _actor(session, Permission.BILLING_CHECKOUT)
    billing = services.ecp.billing
    if billing is None:
        raise Forbidden("billing is not enabled on this server")
    hand_off = billing.checkout(actor, CheckoutRequest(plan=PlanName.SOLO.value))
    return page(
        "handoff.html",
        heading="Subscribe to Solo",
        explanation="The merchant of record takes the payment. Your plan changes when it tells"
        " us the subscription is active, not before.",
        destination="the checkout",
        url=hand_off.url,
    )


def _portal(call: Call, services: Services, cloud: CloudIdentity, session: Session) -> Response:
    """Hand the browser over to the merchant's customer portal."""
    _form_checked(call, cloud, session, "portal")
    actor = _actor(session, Permission.BILLING_CHECKOUT)
    billing = services.ecp.billing
    if billing is None:
        raise Forbidden("billing is not enabled on this server")
    return page(
        "handoff.html",
        heading="Manage billing",
        explanation="The merchant of record keeps your payment details and invoices.",
        destination="the billing portal",
        url=billing.portal(actor).url,
    )


def _revoke(call: Call, services: Services, cloud: CloudIdentity, session: Session) -> Response:
    """Revoke one of the tenant's keys, then back to the account page."""
    key_id = call.path["key_id"]
    _form_checked(call, cloud, session, f"revoke:{key_id}")
    _actor(session, Permission.API_KEY_ADMIN)
    services.ecp.api_keys.revoke(session.tenant_id, key_id)
    return _redirect(ACCOUNT_PATH)


def _replace(call: Call, services: Services, cloud: CloudIdentity, session: Session) -> Response:
    """Revoke a key and make a new one of the same name and role, shown once, here."""
    key_id = call.path["key_id"]
    _form_checked(call, cloud, session, f"replace:{key_id}")
    actor = _actor(session, Permission.API_KEY_ADMIN)
    old = services.ecp.api_keys.get(session.tenant_id, key_id)
    services.ecp.api_keys.revoke(session.tenant_id, key_id)
    new = services.ecp.api_keys.create(actor, CreateApiKeyRequest(name=old.name, role=old.role))
    return page(
        "key_shown.html",
        heading="Your new API key",
        plaintext=new.key,
        role=new.role.value,
        fingerprint=new.fingerprint,
        origin=cloud.browser_origin,
    )


def _actor(session: Session, permission: Permission) -> ActorIdentity:
    """The session's caller, when its roles grant ``permission``; Forbidden otherwise."""
    if not _may(session, permission):
        raise Forbidden(f"this needs the {permission.value} permission")
    return session.actor()


account_page = _browser(_account)
account_checkout = _browser(_checkout)
account_portal = _browser(_portal)
account_key_revoke = _browser(_revoke)
account_key_replace = _browser(_replace)


def _page_operation(
    method: str, path: str, handler: Callable[..., Response], summary: str
) -> Operation:
    return Operation(
        method=method,
        path=path,
        handler=handler,
        operation_id="_".join(
            ["pages", *(part for part in path.strip("/").split("/") if not part.startswith("{"))]
        ),
        tag=TAG,
        summary=summary,
        permission=None,
        public=True,  # the session cookie is checked by the page itself
        response=str,
        media_type="text/html",
        form=method == "POST",
        extra_statuses=(303, 403),
    )


OPERATIONS = [
    _page_operation(
        "GET", ACCOUNT_PATH, account_page, "The account page (HTML): plan, usage, keys"
    ),
    _page_operation(
        "POST", "/account/checkout", account_checkout, "Start the Solo checkout from the browser"
    ),
    _page_operation("POST", "/account/portal", account_portal, "Open the merchant's portal"),
    _page_operation(
        "POST", "/account/keys/{key_id}/revoke", account_key_revoke, "Revoke a key (browser)"
    ),
    _page_operation(
        "POST",
        "/account/keys/{key_id}/replace",
        account_key_replace,
        "Replace a key and show the new one once (browser)",
    ),
]
