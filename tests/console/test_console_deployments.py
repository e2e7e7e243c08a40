"""Deployments and graphs in the console: the list, a deployment's page, a graph's versions.

Each rule through the app's routes on the memory store (roles, tenants, CSRF, paging, what is
shown), and on PostgreSQL the list's statements counted: a few rows and a full page send the same.
"""

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support.console import (
    Person,
    api_key,
    bearer,
    console_client,
    console_settings,
    field,
    page_statements,
    signed_in,
    waiting_run,
)

from ecp_core.types import ServiceRole
from ecp_http.server.console import deployments, drawing
from ecp_http.server.console.browser import CONSOLE_CSP
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleDeploymentsQuery

pytestmark = pytest.mark.integration

TENANT = "console-deployments"
ADMIN = bearer(TENANT, "admin")
OTHER = bearer("console-elsewhere", "admin")
RULE = "C15 console-deployments"
_names = itertools.count()
SET = {"operation": "constant", "target_path": "ok", "value": True}


def looping(graph_id: str, *, extra: str | None = None) -> dict[str, Any]:
    """``check`` → ``pay`` (network write) or ``retry`` → back to ``check``; ``pay`` → ``done``."""
    nodes: list[dict[str, Any]] = [
        {"id": "check", "kind": "mapping", "operations": [SET]},
        {
            "id": "pay",
            "kind": "action",
            "action": {
                "name": "set",
                "fingerprint": "set/1",
                "arguments": {"values": {"paid": True}},
                "capability_refs": ["network_write"],
            },
        },
        {"id": "retry", "kind": "mapping", "operations": [SET]},
        {"id": "done", "kind": "end"},
    ]
    edges: list[dict[str, Any]] = []
    if extra is not None:
        nodes.append({"id": extra, "kind": "end"})
        edges.append({"source": "check", "target": extra, "condition": {"expression": "false"}})
    return {
        "graph_id": graph_id,
        "entry": "check",
        "nodes": nodes,
        "edges": [
            *edges,
            {"source": "check", "target": "pay", "condition": {"expression": "state.ok == true"}},
            {
                "source": "check",
                "target": "retry",
                "condition": {"expression": "state.ok != true"},
            },
            {
                "source": "retry",
                "target": "check",
                "condition": {"expression": "true", "allow_cycle_traversal": True},
            },
            {"source": "pay", "target": "done"},
        ],
    }


def deploy(client: TestClient, ref: str, *, headers: dict[str, str] = ADMIN, **more: Any) -> None:
    """Register :func:`looping` as ``ref`` and deploy it (``more``: the deployment's options)."""
    answer = client.post("/v1/graphs", json=looping(ref), headers=headers)
    assert answer.status_code in (200, 201), answer.text
    body = {"deployment_ref": ref, "graph_id": ref, **more}
    answer = client.post("/v1/deployments", json=body, headers=headers)
    assert answer.status_code == 201, answer.text


def person(client: TestClient, role: str, headers: dict[str, str] = ADMIN) -> Person:
    return signed_in(client, api_key(client, headers, role)[0])


def listed(html: str) -> list[str]:
    """The deployment refs a list page links to, in order."""
    return re.findall(r'href="/console/deployments/([^"]+)"', html)


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


@pytest.mark.spec(RULE)
def test_the_list_shows_each_deployment_with_its_graph_pause_limit_policy_and_runs(client):
    deploy(client, "pay-eu", max_concurrent_runs=3)
    deploy(client, "pay-us")
    deploy(client, "theirs", headers=OTHER)
    policy = {"deny_capabilities": ["network_write", "filesystem_write"]}
    assert client.put("/v1/deployments/pay-eu/policy", json=policy, headers=ADMIN).is_success
    assert client.post("/v1/deployments/pay-us/pause", headers=ADMIN).is_success
    page = person(client, "viewer").get("/console/deployments")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONSOLE_CSP
    html = page.text
    assert listed(html) == ["pay-eu", "pay-us"]  # by ref, not another tenant's
    eu, us = html.split('href="/console/deployments/pay-us"')
    assert "pay-eu@1" in eu and "3 at once" in eu and "active" in eu
    assert "denies filesystem_write, network_write (v1)" in eu
    assert "paused" in us and "no limit" in us and "no policy" in us
    assert 'href="/console/runs?deployment=pay-eu"' in html
    assert 'href="/console/graphs/pay-eu?version=1"' in html


@pytest.mark.spec(RULE)
def test_the_list_is_empty_saying_what_to_do_and_pages_every_deployment_once(client):
    viewer = person(client, "viewer")
    assert "No deployments yet" in viewer.get("/console/deployments").text
    refs = sorted(f"d{i:02d}" for i in range(deployments.DEPLOYMENTS_PAGE + 2))
    for ref in refs:
        deploy(client, ref)
    seen, page = [], viewer.get("/console/deployments").text
    while True:
        seen += listed(page)
        more = re.findall(r'href="/console/deployments\?cursor=([^"]+)"', page)
        if not more:
            break
        page = viewer.get("/console/deployments", cursor=more[0].replace("%3D", "=")).text
        assert "First page" in page
    assert seen == refs
    assert viewer.get("/console/deployments", cursor="garbage").status_code == 422


@pytest.mark.spec(RULE, "C15 console-roles")
def test_who_may_not_read_graphs_is_refused_and_another_tenants_deployment_is_not_found(client):
    deploy(client, "mine")
    deploy(client, "theirs", headers=OTHER)
    worker = person(client, "worker")
    for path in ("/console/deployments", "/console/deployments/mine", "/console/graphs/mine"):
        answer = worker.get(path)
        assert answer.status_code == 403, path
        assert "graph_read" in answer.text
    viewer = person(client, "viewer")
    assert viewer.get("/console/deployments/theirs").status_code == 404
    assert viewer.get("/console/graphs/theirs").status_code == 404
    assert viewer.get("/console/graphs/mine", version="7").status_code == 404
    assert viewer.get("/console/graphs/mine", version="x").status_code == 422
    assert viewer.get("/console/graphs/mine", version="0").status_code == 422
    assert viewer.get("/console/graphs/mine", cursor="garbage").status_code == 422
    assert viewer.get("/console/deployments/mine%00").status_code == 404
    assert viewer.get("/console/deployments", cursor="\x00").status_code == 422
    assert viewer.get("/console/deployments", page="2").status_code == 422  # no such filter


@pytest.mark.spec(RULE)
def test_a_deployment_page_draws_its_version_with_policy_versions_and_stopped_nodes(client):
    deploy(client, "pay")
    newer = looping("pay", extra="later")
    assert client.post("/v1/graphs", json=newer, headers=ADMIN).status_code == 201
    assert client.put(
        "/v1/deployments/pay/policy", json={"deny_capabilities": ["network_write"]}, headers=ADMIN
    ).is_success
    versions = client.get("/v1/graphs/pay/versions", headers=ADMIN).json()["versions"]
    html = person(client, "viewer").get("/console/deployments/pay").text
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert 'role="img"' in svg
    assert sorted(re.findall(r'data-node="([^"]+)"', svg)) == ["check", "done", "pay", "retry"]
    assert svg.count("data-source=") == 4
    assert "edge back conditional" in svg  # retry → check leads back up
    assert "state.ok == true" in svg
    assert "Nodes as a list" in html
    assert versions[0]["digest"] in html  # the deployed version's digest in full
    assert versions[1]["digest"][:12] in html  # and the newer one's, listed
    assert 'href="/console/graphs/pay?version=2"' in html
    assert "deployed" in html
    assert "Nodes the policy stops" in html and "uses network_write" in html
    assert 'class="node state-denied" data-node="pay"' in svg  # drawn so
    assert "policy stops it" in svg and "stopped by the policy" in html
    assert 'class="node state-plain" data-node="check"' in svg
    assert "Pause the deployment" not in html  # a viewer may not control runs


@pytest.mark.spec(RULE)
def test_a_graph_page_draws_the_chosen_version_and_the_latest_by_default(client):
    deploy(client, "pay")
    assert client.post("/v1/graphs", json=looping("pay", extra="later"), headers=ADMIN).is_success
    viewer = person(client, "viewer")
    latest = viewer.get("/console/graphs/pay").text
    first = viewer.get("/console/graphs/pay", version="1").text
    assert 'data-node="later"' in latest and 'data-node="later"' not in first
    assert 'pay <span class="muted">v2</span>' in latest
    assert 'href="/console/graphs/pay?version=2"' in first
    assert 'href="/console/graphs/pay?version=1"' in latest


@pytest.mark.spec(RULE, "C15 console-csrf")
def test_an_operator_pauses_and_unpauses_with_the_form_and_nothing_without_its_token(client):
    deploy(client, "pay")
    operator = person(client, "operator")
    page = operator.get("/console/deployments/pay").text
    action = "/console/deployments/pay/pause"
    token = field(page, "csrf_token", action)

    def paused() -> bool:
        return bool(client.get("/v1/deployments/pay", headers=ADMIN).json()["paused"])

    assert operator.post(action, {"reason": "incident"}).status_code == 403
    other = person(client, "operator")
    other_token = field(other.get("/console/deployments/pay").text, "csrf_token", action)
    assert operator.post(action, {"csrf_token": other_token}).status_code == 403
    assert not paused()
    done = operator.post(action, {"csrf_token": token, "reason": "incident 42"})
    assert done.status_code == 303 and done.headers["location"] == "/console/deployments/pay"
    assert paused()
    page = operator.get("/console/deployments/pay").text
    assert "This deployment is paused" in page and "Unpause the deployment" in page
    unpause = "/console/deployments/pay/unpause"
    too_long = operator.post(unpause, {"csrf_token": token, "reason": "x" * 501})
    assert too_long.status_code == 422 and paused()
    assert operator.post(unpause, {"csrf_token": token}).status_code == 303
    assert not paused()


@pytest.mark.spec(RULE, "C15 console-roles")
def test_who_may_not_control_runs_gets_403_for_a_forged_pause_and_another_tenant_404(client):
    deploy(client, "pay")
    deploy(client, "theirs", headers=OTHER)
    viewer = person(client, "viewer")
    page = viewer.get("/console/deployments/pay").text
    assert "Pause the deployment" not in page
    forged = viewer.post("/console/deployments/pay/pause", {"csrf_token": viewer_token(viewer)})
    assert forged.status_code == 403
    assert not client.get("/v1/deployments/pay", headers=ADMIN).json()["paused"]
    admin = person(client, "admin")
    theirs = admin.post("/console/deployments/theirs/pause", {"csrf_token": admin_token(admin)})
    assert theirs.status_code == 404
    assert not client.get("/v1/deployments/theirs", headers=OTHER).json()["paused"]


def viewer_token(viewer: Person) -> str:
    """The viewer's own session's token for the pause form (the page offers no such form)."""
    return _token_of(viewer, "pause:pay")


def admin_token(admin: Person) -> str:
    return _token_of(admin, "pause:theirs")


def _token_of(someone: Person, form: str) -> str:
    """A session's real CSRF token for ``form``, as the server would make it."""
    sessions = someone.client.app.state.runtime.services.console  # type: ignore[attr-defined]
    session = sessions.session(
        {"cookie": "; ".join(f"{k}={v}" for k, v in someone.cookies.items())}
    )
    return str(sessions.csrf(session, form))


@pytest.mark.spec("C15 console-drawing")
def test_the_drawing_script_is_a_file_under_the_console_policy(client):
    answer = client.get("/console/static/drawing.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["content-security-policy"] == CONSOLE_CSP
    assert "data-drawing" in answer.text
    page = person(client, "viewer").get("/console/deployments")
    assert '<script src="/console/static/drawing.js" defer></script>' in page.text
    assert "<script>" not in page.text and "style=" not in page.text


def _counted(
    services: object, handler: object, params: object = None, **path: str
) -> tuple[int, int]:
    """The statements a page sends, and its status (an approver of TENANT asks)."""
    return page_statements(services, handler, TENANT, params, role=ServiceRole.APPROVER, **path)


@pytest.mark.spec(RULE)
def test_the_list_sends_the_same_statements_for_a_few_deployments_as_for_a_full_page(
    fresh_database,
):
    app = create_app(console_settings(database_url=fresh_database))
    with TestClient(app) as client:
        services = app.state.runtime.services
        policy = {"deny_capabilities": ["network_write"]}
        for ref in ("a0", "a1"):
            deploy(client, ref)
            assert client.put(
                f"/v1/deployments/{ref}/policy", json=policy, headers=ADMIN
            ).is_success
        query = ConsoleDeploymentsQuery()
        _counted(services, deployments.deployments, query)  # what a process reads once
        _counted(services, deployments.deployment_page, ref="a1")
        few, status = _counted(services, deployments.deployments, query)
        assert status == 200
        page, status = _counted(services, deployments.deployment_page, ref="a0")
        assert status == 200
        for i in range(deployments.DEPLOYMENTS_PAGE + 2):
            deploy(client, f"b{i:02d}")
            assert client.put(
                f"/v1/deployments/b{i:02d}/policy", json=policy, headers=ADMIN
            ).is_success
        many, _ = _counted(services, deployments.deployments, query)
        assert many == few <= 3  # the session's key check aside: the page, its policies
        again, _ = _counted(services, deployments.deployment_page, ref="b00")
        assert again == page


@pytest.mark.spec(RULE, "C15 console-drawing")
def test_a_graph_too_large_to_draw_is_shown_as_its_node_list(client):
    count = drawing.MAX_DRAWN_NODES + 1
    ids = [f"step-{i:03d}" for i in range(count)]
    graph = {
        "graph_id": "long",
        "entry": ids[0],
        "nodes": [{"id": i, "kind": "mapping", "operations": [SET]} for i in ids[:-1]]
        + [{"id": ids[-1], "kind": "end"}],
        "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(ids)],
    }
    assert client.post("/v1/graphs", json=graph, headers=ADMIN).status_code == 201
    body = {"deployment_ref": "long", "graph_id": "long"}
    assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
    for path in ("/console/deployments/long", "/console/graphs/long"):
        html = person(client, "viewer").get(path).text
        assert "<svg" not in html
        assert f"This graph has {count} nodes: too many to draw here" in html
        assert html.count('class="node node-plain"') == count


@pytest.mark.spec("C15 console-drawing", "C15 console-approval")
def test_the_approval_page_draws_the_path_taken_and_where_the_run_waits(client):
    graph = {
        "graph_id": "expenses",
        "entry": "classify",
        "nodes": [
            {"id": "classify", "kind": "mapping", "operations": [SET]},
            {"id": "review", "kind": "approval", "summary": "Approve", "rationale": "Big"},
            {"id": "auto", "kind": "mapping", "operations": [SET]},
            {"id": "done", "kind": "end"},
        ],
        "edges": [
            {"source": "classify", "target": "review", "condition": {"expression": "state.ok"}},
            {"source": "classify", "target": "auto", "condition": {"expression": "!state.ok"}},
            {"source": "review", "target": "done"},
            {"source": "auto", "target": "done"},
        ],
    }
    assert client.post("/v1/graphs", json=graph, headers=ADMIN).status_code == 201
    body = {"deployment_ref": "expenses", "graph_id": "expenses"}
    assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
    _, approval_id = waiting_run(client, ADMIN, "expenses")
    html = person(client, "approver").get(f"/console/approvals/{approval_id}").text
    svg = html[html.index("<svg") : html.index("</svg>")]
    drawn = re.findall(r'class="node state-([a-z]+)" data-node="([^"]+)"', svg)
    assert {node: state for state, node in drawn} == {
        "classify": "done",
        "review": "here",
        "auto": "ahead",
        "done": "ahead",
    }
    taken = re.findall(r'class="edge taken[^"]*" data-source="([^"]+)" data-target="([^"]+)"', svg)
    assert taken == [("classify", "review")]
    assert "Nodes as a list" in html and 'class="node node-here"' in html
