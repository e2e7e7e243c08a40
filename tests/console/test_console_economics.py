"""The console's economics page over HTTP on the memory store: figures, decisions, roles, tenants.

Evidence is posted through the API (:mod:`tests.support.economics`); the page must show what the
debugger and the decision history answer, money exactly, incomplete evidence as incomplete,
charts as clean inline SVG beside their tables, and nothing of another tenant.
"""

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.support.console import api_key, bearer, console_client, signed_in
from tests.support.economics import seed

from ecp_core.errors import ValidationFailed
from ecp_http.server.console.browser import CONSOLE_CSP
from ecp_http.server.console.economics import DEFAULT_DAYS, debugger_query, window
from ecp_http.server.console.figures import DASH, MINUS
from ecp_http.wire.models import ConsoleEconomicsQuery

pytestmark = pytest.mark.integration

TENANT = "console-econ"
ADMIN = bearer(TENANT, "admin")
ECONOMICS = "C15 console-economics"
ROLES = "C15 console-roles"


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


@pytest.fixture
def seeded(client: TestClient) -> dict:
    return seed(client, ADMIN)


def analyst(client: TestClient, admin: dict[str, str] = ADMIN):
    return signed_in(client, api_key(client, admin, "analyst")[0])


@pytest.mark.spec(ECONOMICS)
def test_the_figures_are_the_debuggers_money_exact_and_incomplete_said(client, seeded):
    person = analyst(client)
    page = person.get("/console/economics", workflow="claims")
    assert page.status_code == 200, page.text
    html = page.text
    api = client.get(
        "/v1/debugger/report",
        params={
            "workflow_id": "claims",
            "start": re.search(r'id="start"[^>]*value="([^"]+)"', html).group(1) + "T00:00:00Z",
            "end": "2100-01-01T00:00:00Z",
        },
        headers=bearer(TENANT, "analyst"),
    ).json()
    v2 = next(row for row in api["versions"] if row["workflow_version"] == "v2")
    assert v2["accounting"]["known_cost_usd"] == "50.00"  # 40 x 1.20 + 8 x 0.25
    assert "$50.00" in html
    # v1: 39 x 1.00 + 1E-8 + 8 x 0.25, and a charge of unknown cost: a lower bound, not a total
    assert "at least $41.00000001" in html
    assert "1 charge(s) of unknown cost" in html
    assert "unknown: some costs are missing" in html  # v1's cost per success is not a number
    assert html.count('class="badge warn">incomplete') >= 1
    assert "$0.00000001" in html or "41.00000001" in html
    for heading in ("Cost by version", "Cost over time", "Where failed runs spent", "Cost by"):
        assert heading in html
    assert html.count("<svg") >= 4 + 3  # four debugger charts, three decision constraints
    assert "<style" not in html and "style=" not in html
    for script in re.findall(r"<script[^>]*>", html):  # files the wheel ships, never inline
        assert re.fullmatch(r'<script src="/console/static/[a-z]+\.js" defer>', script)
    assert "Known cost by workflow version" in html and "v1 (incomplete)" in html
    by_plan = person.get("/console/economics", workflow="claims", cohort="dimension:plan").text
    assert "<code>pro</code>" in by_plan and "<code>free</code>" in by_plan
    hourly = person.get("/console/economics", workflow="claims", granularity="hour")
    assert hourly.status_code == 200 and "Known cost by hour" in hourly.text
    assert (
        len(re.findall(r'data-label="Window \(UTC\)"', hourly.text)) == 2 * 40
    )  # a run an hour, each version
    only_v2 = person.get("/console/economics", workflow="claims", version="v2").text
    assert "$50.00" in only_v2 and "at least $41.00000001" not in only_v2


@pytest.mark.spec(ECONOMICS)
def test_decisions_show_their_verdict_and_intervals_low_to_high(client, seeded):
    html = analyst(client).get("/console/economics", workflow="claims").text
    assert f"rev {seeded['revision']}" in html
    assert f'verdict-{seeded["verdict"]}">{seeded["verdict"]}' in html
    for found in seeded["constraints"]:
        if found["interval"] is not None:
            low, high = found["interval"]
            shown = f"{low:.3f} {DASH} {high:.3f}".replace("-", MINUS)
            assert shown in html, shown
    assert "Candidate success rate" in html and "Cost per accepted outcome" in html
    assert "Observed comparison: traffic between the versions was not randomized" in html
    every = analyst(client).get("/console/economics").text  # no workflow: decisions of all
    assert "Name a workflow" in every and "claims</a>" in every


@pytest.mark.spec(ECONOMICS)
def test_an_empty_tenant_and_an_unknown_workflow_say_what_to_do(client):
    person = analyst(client)
    html = person.get("/console/economics").text
    assert "Name a workflow" in html and "No decisions retained" in html
    none = person.get("/console/economics", workflow="nothing-here").text
    assert "No execution events of this workflow in the window" in none
    assert "No figures" in none  # the chart says it, too


@pytest.mark.spec(ECONOMICS)
@pytest.mark.parametrize(
    ("query", "says"),
    [
        ({"workflow": "claims", "start": "yesterday"}, "must be a date"),
        ({"workflow": "claims", "start": "2026-05-02", "end": "2026-05-01"}, "must not be before"),
        ({"workflow": "claims", "granularity": "week"}, "the filter"),
        ({"workflow": "claims", "cohort": "plan; drop"}, "the filter"),
        ({"workflow": "x" * 300}, "the filter"),
    ],
)
def test_a_bad_filter_is_a_422_page_with_the_form(client, query, says):
    answer = analyst(client).get("/console/economics", **query)
    assert answer.status_code == 422, answer.text
    assert says in answer.text and 'id="workflow"' in answer.text


@pytest.mark.spec(ECONOMICS)
def test_a_bad_decisions_cursor_is_a_4xx_page(client):
    answer = analyst(client).get("/console/economics", decisions="not-a-cursor")
    assert 400 <= answer.status_code < 500


@pytest.mark.spec(ECONOMICS)
def test_decisions_page_newest_first_and_keep_the_filter(client, seeded):
    for growth in range(11):  # eleven more artifacts: another policy each
        body = {
            "workflow_id": "claims",
            "baseline_version": "v1",
            "candidate_version": "v2",
            "start": "2020-01-01T00:00:00Z",
            "end": "2100-01-01T00:00:00Z",
            "policy": {"min_success_rate": 0.5, "max_cost_growth": growth / 10},
        }
        assert client.post("/v1/decisions/compare", json=body, headers=ADMIN).status_code == 201
    person = analyst(client)
    first = person.get("/console/economics", workflow="claims").text
    older = re.search(r'href="(/console/economics\?[^"]*decisions=[^"]+)"', first)
    assert older is not None and "workflow=claims" in older.group(1)
    second = person.get(older.group(1).replace("&amp;", "&")).text
    ids = re.findall(r'id="decision-\d+"', first), re.findall(r'id="decision-\d+"', second)
    assert len(ids[0]) == 10 and len(ids[1]) == 2
    assert "Newest decisions" in second


@pytest.mark.spec(ROLES, ECONOMICS)
def test_who_may_see_economics(client, seeded):
    viewer = signed_in(client, api_key(client, ADMIN, "viewer")[0])
    assert viewer.get("/console/economics", workflow="claims").status_code == 403
    assert 'href="/console/economics"' not in viewer.get("/console/audit").text
    operator = signed_in(client, api_key(client, ADMIN, "operator")[0])
    assert operator.get("/console/economics").status_code == 403
    approver = signed_in(client, api_key(client, ADMIN, "approver")[0])
    assert "$50.00" in approver.get("/console/economics", workflow="claims").text
    assert 'href="/console/economics"' in analyst(client).get("/console/economics").text


@pytest.mark.spec(ROLES, ECONOMICS)
def test_another_tenants_figures_and_decisions_never_appear(client, seeded):
    other_admin = bearer("console-econ-other", "admin")
    other = analyst(client, other_admin)
    html = other.get("/console/economics", workflow="claims").text
    assert "$50.00" not in html and "No execution events" in html
    assert "No decisions retained" in html
    assert "No decisions retained" in other.get("/console/economics").text


@pytest.mark.spec(ECONOMICS, "C15 console-csp")
def test_the_page_carries_the_console_policy_even_when_the_filter_is_bad(client, seeded):
    person = analyst(client)
    for query in ({"workflow": "claims"}, {"workflow": "claims", "end": "%00"}, {"decisions": "x"}):
        answer = person.get("/console/economics", **query)
        assert answer.status_code < 500
        assert answer.headers["content-security-policy"] == CONSOLE_CSP


@pytest.mark.spec(ECONOMICS)
@settings(max_examples=80, deadline=None)
@given(
    first=st.dates(min_value=date(2000, 1, 1), max_value=date(2200, 1, 1)),
    days=st.integers(min_value=-3, max_value=800),
)
def test_the_window_is_every_whole_utc_day_from_first_to_last(first, days):
    last = first + timedelta(days=days)
    query = ConsoleEconomicsQuery(workflow="w", start=first.isoformat(), end=last.isoformat())
    if days < 0:
        with pytest.raises(ValidationFailed):
            window(query, date(2026, 1, 1))
        return
    assert window(query, date(2026, 1, 1)) == (first, last)
    asked = debugger_query(query, first, last)
    assert asked.start == datetime.combine(first, time(), UTC)
    assert asked.end - asked.start == timedelta(days=days + 1)  # the last day is included
    only_end = ConsoleEconomicsQuery(end=last.isoformat())
    assert window(only_end, date(2026, 1, 1)) == (last - timedelta(days=DEFAULT_DAYS - 1), last)


@pytest.mark.spec(ECONOMICS)
def test_a_window_too_large_to_total_says_so_and_keeps_the_form(client, seeded, monkeypatch):
    monkeypatch.setattr("ecp_core.debugger.service.MAX_WINDOW_EVENTS", 5)
    answer = analyst(client).get("/console/economics", workflow="claims")
    assert answer.status_code == 422
    assert "narrow it" in answer.text and 'id="workflow"' in answer.text
    assert "$50.00" not in answer.text  # no partial total
