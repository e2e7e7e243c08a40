"""The hosted offer's public pages: ``/`` (the Solo offer and a login link) and the stylesheet.

Served only when the identity provider is enabled: without a login there is no offer to take.
"""

from starlette.responses import HTMLResponse, Response

from ecp_core.billing.model import TRIAL_DAYS
from ecp_core.entitlements.model import MIN_SCHEDULE_INTERVAL_SECONDS, SOLO, Meter
from ecp_http.server.pages.render import STYLESHEET_PATH, page, stylesheet
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "pages"
LOGIN_PATH = "/v1/cloud/auth/login"


def solo_quotas() -> list[str]:
    """The Solo plan's allowances as the offer states them, from the plan itself."""
    hours = MIN_SCHEDULE_INTERVAL_SECONDS // 3600
    return [
        f"{SOLO.allowance(Meter.INGESTED_EVENTS):,} ingested evidence events a month",
        f"{SOLO.allowance(Meter.DECISION_SCANS)} version-decision scans a month",
        f"{SOLO.allowance(Meter.HOSTED_BACKTESTS)} hosted model backtests a month",
        f"{SOLO.allowance(Meter.PROVIDER_CALL_CREDITS)} provider-call credits a month",
        f"Up to {SOLO.allowance(Meter.SCHEDULES)} decision schedules, every {hours} hours at most",
    ]


def landing_page(_: Call, __: Services) -> HTMLResponse:
    """The single Solo offer with a login link."""
    return page(
        "landing.html",
        solo=SOLO,
        solo_quotas=solo_quotas(),
        trial_days=TRIAL_DAYS,
        login_url=LOGIN_PATH,
    )


def stylesheet_file(_: Call, __: Services) -> Response:
    """The pages' stylesheet."""
    return stylesheet()


OPERATIONS = [
    Operation(
        method="GET",
        path="/",
        handler=landing_page,
        operation_id="pages_landing",
        tag=TAG,
        summary="The hosted offer: the Solo plan and a login link (an HTML page)",
        permission=None,
        response=str,
        public=True,
        media_type="text/html",
    ),
    Operation(
        method="GET",
        path=STYLESHEET_PATH,
        handler=stylesheet_file,
        operation_id="pages_stylesheet",
        tag=TAG,
        summary="The hosted pages' stylesheet",
        permission=None,
        response=str,
        public=True,
        media_type="text/css",
    ),
]
