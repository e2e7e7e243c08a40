"""The console's run list and run page over HTTP on the memory store: roles, tenants, filters,
pages, what is and is not shown (the controls and Verify: ``test_console_run_control.py``).

The statements a page sends on PostgreSQL are counted in ``test_console_runs_statements.py``;
the pages in a real browser are ``test_console_browser_runs.py``.
"""

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient
from tests.support.console import (
    WAIT,
    api_key,
    bearer,
    console_client,
    deployed,
    signed_in,
    waiting_run,
)
from tests.support.console_runs import ADMIN, TENANT, approve, listed, person, run_status

from ecp_http.server.console.browser import CONSOLE_CSP
from ecp_http.server.console.run_views import RUNS_PAGE

pytestmark = pytest.mark.integration

RUNS = "C15 console-runs"
RUN = "C15 console-run"


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


@pytest.mark.spec(RUNS, "C15 console-roles")
def test_who_reads_runs_sees_the_list_and_who_may_not_is_refused(client):
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    for role in ("admin", "operator", "approver", "analyst", "viewer"):
        page = person(client, role).get("/console/runs")
        assert page.status_code == 200, role
        assert listed(page.text) == [run_id], role
        assert "waiting approval" in page.text and "approval" in page.text
    refused = person(client, "worker").get("/console/runs")
    assert refused.status_code == 403 and "Not allowed" in refused.text


@pytest.mark.spec(RUNS, RUN, "§5 tenant-isolation")
def test_another_tenants_runs_are_neither_listed_nor_shown(client):
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    other_admin = bearer("elsewhere", "admin")
    other = signed_in(client, api_key(client, other_admin, "admin")[0])
    assert listed(other.get("/console/runs").text) == []
    assert "No runs yet" in other.get("/console/runs").text
    for path in (f"/console/runs/{run_id}", f"/console/runs/{run_id}/verify"):
        page = other.get(path)
        assert page.status_code == 404 and "Not found" in page.text, path
    assert other.get("/console/runs", find=run_id).status_code == 200
    assert listed(other.get("/console/runs", find=run_id).text) == []


@pytest.mark.spec(RUNS)
def test_the_filters_find_by_deployment_status_time_and_id_or_key(client):
    deployed(client, ADMIN, "pay")
    deployed(client, ADMIN, "ship")
    paid, approval_id = waiting_run(client, ADMIN, "pay")
    approve(client, "pay", approval_id)
    shipping, _ = waiting_run(client, ADMIN, "ship")
    keyed = client.post(
        "/runs",
        json={"deployment_ref": "ship", "input": {}, "idempotency_key": "order-42"},
        headers={**ADMIN, **WAIT},
    ).json()["run_id"]
    reader = person(client, "viewer")

    def found(**query: str) -> list[str]:
        page = reader.get("/console/runs", **query)
        assert page.status_code == 200, page.text
        return listed(page.text)

    assert found() == [keyed, shipping, paid]
    assert found(deployment="ship") == [keyed, shipping]
    assert found(status="completed") == [paid]
    assert found(status="waiting_approval") == [keyed, shipping]
    assert found(status="canceled") == []
    assert found(find=paid) == [paid]
    assert found(find=" order-42 ") == [keyed]
    assert found(deployment="pay", status="waiting_approval") == []
    today = datetime.now(UTC)
    assert found(started_from=today.strftime("%Y-%m-%d")) == [keyed, shipping, paid]
    assert found(started_to=(today - timedelta(days=1)).strftime("%Y-%m-%d")) == []
    assert found(started_from=(today + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M")) == []
    assert found(started_to=today.strftime("%Y-%m-%dT%H:%M")) == [keyed, shipping, paid]
    assert "No run matches these filters" in reader.get("/console/runs", status="failed").text
    page = reader.get("/console/runs", status="completed").text
    assert '<option value="completed" selected>' in page


@pytest.mark.spec(RUNS, "C15 console-csp")
@pytest.mark.parametrize(
    "query",
    [
        {"status": "bogus"},
        {"started_from": "yesterday"},
        {"started_to": "2026-13-40"},
        {"started_from": "2026-01-01T10:00+02:00"},
        {"cursor": "not-a-cursor"},
        {"cursor": "WyJpbmJveCIsIngiXQ"},  # another list's cursor
    ],
)
def test_a_bad_filter_is_a_4xx_page_never_a_5xx(client, query):
    page = person(client, "viewer").get("/console/runs", **query)
    assert page.status_code == 422, page.text
    assert "That did not work" in page.text


@pytest.mark.spec(RUNS, "C1 list-paging")
def test_the_list_pages_by_keyset_newest_first_and_keeps_the_filters(client):
    deployed(client, ADMIN, "bulk")
    deployed(client, ADMIN, "other")
    made = [waiting_run(client, ADMIN, "bulk")[0] for _ in range(RUNS_PAGE + 2)]
    waiting_run(client, ADMIN, "other")
    reader = person(client, "analyst")

    def pages(**query: str) -> list[list[str]]:
        found, page = [], reader.get("/console/runs", **query).text
        while True:
            found.append(listed(page))
            links = re.findall(r'href="(/console/runs\?[^"]*cursor=[^"]+)"', page)
            if not links:
                return found
            for name, value in query.items():
                assert f"{name}={value}" in links[0]
            page = reader.get(links[0].replace("&amp;", "&")).text
            assert "First page" in page

    newest = made[::-1]
    assert pages(deployment="bulk") == [newest[:RUNS_PAGE], newest[RUNS_PAGE:]]
    assert pages(deployment="bulk", status="waiting_approval")[1] == newest[RUNS_PAGE:]
    every = pages()
    assert [len(page) for page in every] == [RUNS_PAGE, 3]


@pytest.mark.spec(RUN)
def test_the_run_page_shows_the_run_its_graph_timeline_and_approval(client):
    deployed(client, ADMIN, "pay")
    run_id, approval_id = waiting_run(client, ADMIN, "pay", {"supplier": "ACME", "amount": 7})
    page = person(client, "approver").get(f"/console/runs/{run_id}")
    assert page.status_code == 200
    html = page.text
    assert run_id in html and "waiting approval" in html and "<code>pay</code>" in html
    assert f'href="/console/approvals/{approval_id}"' in html and "Pay the supplier" in html
    assert "waits here" in html and "not reached" in html  # the graph, where it waits
    assert "waiting approval" in html.split('id="timeline"')[1]  # the timeline's records
    assert "Payload under review" in html and "ACME" in html
    assert "None yet" in html  # no output before it completes
    assert "Verify the chain" not in html  # approvers do not read audit records
    assert "/cancel" not in html and "/pause" not in html  # nor control runs


@pytest.mark.spec(RUN, "C15 console-roles")
def test_an_analyst_sees_the_run_but_no_approval_link_form_or_control(client):
    deployed(client, ADMIN, "pay")
    run_id, approval_id = waiting_run(client, ADMIN, "pay")
    html = person(client, "analyst").get(f"/console/runs/{run_id}").text
    assert run_id in html and "waits here" in html
    assert f"/console/approvals/{approval_id}" not in html
    assert '<form method="post" action="/console/runs' not in html
    assert "Verify the chain" not in html


@pytest.mark.spec(RUN)
def test_a_completed_run_shows_its_output_and_an_erased_one_marks_it_erased(client):
    deployed(client, ADMIN, "pay")
    run_id, approval_id = waiting_run(client, ADMIN, "pay", {"supplier": "Secretive Ltd"})
    approve(client, "pay", approval_id)
    reader = person(client, "viewer")
    html = reader.get(f"/console/runs/{run_id}").text
    assert "completed" in html and "Secretive Ltd" in html.split('id="payloads"')[1]
    assert "Payload under review" not in html
    erased = client.post(
        "/v1/retention/erasure-requests", json={"run_id": run_id, "reason": "gdpr"}, headers=ADMIN
    )
    assert erased.status_code in (200, 201, 202), erased.text
    assert run_status(client, run_id)["output"] is None  # as the API's run read shows it
    html = reader.get(f"/console/runs/{run_id}").text
    assert "Secretive Ltd" not in html
    assert ">erased</span>" in html and "its output is gone" in html


@pytest.mark.spec(RUN)
def test_the_run_page_lists_its_tasks_and_their_workers_to_who_reads_tasks(client):
    graph = {
        "graph_id": "charge",
        "entry": "work",
        "nodes": [
            {
                "id": "work",
                "kind": "task",
                "action": {
                    "name": "charge",
                    "fingerprint": "sha256:work",
                    "arguments": {"card": "4111-secret"},
                    "side_effect": "idempotent",
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "work", "target": "done"}],
    }
    assert client.post("/v1/graphs", json=graph, headers=ADMIN).status_code == 201
    body = {"deployment_ref": "charge", "graph_id": "charge"}
    assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
    run_id = client.post(
        "/runs", json={"deployment_ref": "charge", "input": {}}, headers={**ADMIN, **WAIT}
    ).json()["run_id"]
    claim = {"worker_id": "worker-7", "topics": ["charge"]}
    claimed = client.post("/v1/tasks/claim", json=claim, headers=bearer(TENANT, "worker"))
    assert claimed.status_code == 200 and claimed.json(), claimed.text
    html = person(client, "operator").get(f"/console/runs/{run_id}").text
    assert "a worker&#39;s task" in html or "a worker's task" in html
    tasks = html.split('id="tasks"')[1]
    assert "worker-7" in tasks and "locked" in tasks and "1 of" in tasks
    assert "4111-secret" not in html  # a task's arguments are never shown
    assert 'id="tasks"' not in person(client, "viewer").get(f"/console/runs/{run_id}").text


def _deploy(client: TestClient, graph: dict) -> None:
    made = client.post("/v1/graphs", json=graph, headers=ADMIN)
    assert made.status_code == 201, made.text
    body = {"deployment_ref": graph["graph_id"], "graph_id": graph["graph_id"]}
    assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201


def _start(client: TestClient, ref: str) -> dict:
    return client.post(
        "/runs",
        json={"deployment_ref": ref, "input": {"customer": "c-1"}},
        headers={**ADMIN, **WAIT},
    ).json()


@pytest.mark.spec(RUN, RUNS)
def test_a_failed_run_shows_why_and_a_timer_run_when_it_wakes(client):
    broken = {
        "graph_id": "broken",
        "entry": "act",
        "nodes": [
            {
                "id": "act",
                "kind": "mapping",
                "operations": [{"operation": "copy", "source_path": "nowhere", "target_path": "x"}],
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "act", "target": "done"}],
    }
    nap = {
        "graph_id": "nap",
        "entry": "nap",
        "nodes": [{"id": "nap", "kind": "wait", "seconds": 3600}, {"id": "done", "kind": "end"}],
        "edges": [{"source": "nap", "target": "done"}],
    }
    _deploy(client, broken)
    _deploy(client, nap)
    failed = _start(client, "broken")
    assert failed["status"] == "failed", failed
    napping = _start(client, "nap")
    assert napping["status"] == "waiting_timer", napping
    reader = person(client, "viewer")
    html = reader.get(f"/console/runs/{failed['run_id']}").text
    assert "Failed: <code>mapping_error</code>" in html and "at node <code>act</code>" in html
    assert "A mapping node found no value at its source path" in html  # what the reason means
    html = reader.get(f"/console/runs/{napping['run_id']}").text
    wakes = napping["wait_until"][:19].replace("T", " ")
    assert "Wakes at" in html and wakes in html
    listed_html = reader.get("/console/runs", status="waiting_timer").text
    assert listed(listed_html) == [napping["run_id"]] and f"timer until {wakes}" in listed_html
    assert listed(reader.get("/console/runs", status="failed").text) == [failed["run_id"]]


@pytest.mark.spec(RUN)
def test_a_parent_run_links_its_children_and_a_child_its_parent(client):
    child = {
        "graph_id": "child",
        "entry": "review",
        "nodes": [
            {"id": "review", "kind": "approval", "summary": "Check", "rationale": "A person"},
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "review", "target": "done"}],
    }
    parent = {
        "graph_id": "parent",
        "entry": "call",
        "nodes": [
            {"id": "call", "kind": "subgraph", "subgraph": {"deployment_ref": "child"}},
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "call", "target": "done"}],
    }
    _deploy(client, child)
    _deploy(client, parent)
    started = _start(client, "parent")
    assert started["status"] == "waiting_child", started
    children = client.get(f"/runs/{started['run_id']}/children", headers=ADMIN).json()["children"]
    (child_id,) = [c["run_id"] for c in children]
    reader = person(client, "analyst")
    html = reader.get(f"/console/runs/{started['run_id']}").text
    assert "a child run" in html
    assert f'href="/console/runs/{child_id}"' in html.split('id="children"')[1]
    html = reader.get(f"/console/runs/{child_id}").text
    assert f'<a href="/console/runs/{started["run_id"]}">' in html  # its parent


@pytest.mark.spec("C15 console-csp", RUNS, RUN)
def test_every_run_page_sends_the_policy_and_no_inline_script_or_style(client):
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    admin = person(client, "admin")
    page = admin.get(f"/console/runs/{run_id}").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.split("/pause")[1])
    assert token is not None
    answers = [
        admin.get("/console/runs"),
        admin.get("/console/runs", status="bogus"),
        admin.get(f"/console/runs/{run_id}"),
        admin.get(f"/console/runs/{run_id}/verify"),
        admin.get("/console/runs/nope"),
        admin.post(f"/console/runs/{run_id}/pause", {"csrf_token": token.group(1)}),
        admin.post(f"/console/runs/{run_id}/cancel", {}),
    ]
    assert [a.status_code for a in answers] == [200, 422, 200, 200, 404, 303, 403]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CONSOLE_CSP
        assert answer.headers["cache-control"] == "no-store"
        text = answer.text.lower()
        scripts = re.findall(r"<script[^>]*>", text)
        assert all('src="/console/static/' in tag for tag in scripts), scripts
        assert " style=" not in text and "<style" not in text
