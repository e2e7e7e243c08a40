"""Action plug-ins through the real server: the installed ``ecp.actions`` entry point runs.

``tests/plugins/ecp_example_actions`` is installed into the test venv (the dev group, a workspace member); its
entry point registers ``greet``. The server below is uvicorn on 127.0.0.1 over PostgreSQL.
"""

import pytest
from tests.support.e2e import check, deploy, problem, start

pytestmark = pytest.mark.e2e

GREET = {
    "name": "greet",
    "fingerprint": "greet/1",
    "capability_refs": [],
    "side_effect": "none",
    "arguments_schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
    "source": "plugin",
}


def greeting_graph(action: str = "greet") -> dict:
    return {
        "graph_id": "greeting",
        "entry": "hello",
        "nodes": [
            {
                "id": "hello",
                "kind": "action",
                "action": {
                    "name": action,
                    "fingerprint": f"{action}/1",
                    "arguments": {"name": "Ana"},
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "hello", "target": "done"}],
    }


@pytest.mark.spec("C10 action-plugins")
def test_the_installed_entry_point_is_listed_and_runs(ecp_server, admin, tenant):
    listed = check(admin.get("/v1/actions"), 200)["actions"]
    assert [a["name"] for a in listed] == sorted(a["name"] for a in listed)
    by_name = {action["name"]: action for action in listed}
    assert by_name["greet"] == GREET
    assert by_name["echo"]["source"] == by_name["set"]["source"] == "builtin"

    deploy(admin, greeting_graph(), "greetings")
    run = start(admin, "greetings", {"input": {}})
    assert run["status"] == "completed", run
    assert run["output"] == {"greeting": "Hello, Ana!"}


@pytest.mark.spec("C10 action-plugins")
def test_a_graph_naming_an_action_the_server_cannot_run_is_422(ecp_server, admin, tenant):
    body = problem(admin.post("/v1/graphs", json=greeting_graph("teleport")), 422, "unknown_action")
    assert body["errors"] == [
        {"loc": ["nodes", 0, "action", "name"], "msg": "no registered action 'teleport'"}
    ]
    problem(admin.get("/v1/graphs/greeting"), 404, "not_found")


@pytest.mark.spec("C10 action-plugins")
def test_who_may_list_the_actions(ecp_server, tenant):
    for role in ("admin", "operator", "approver", "analyst", "viewer"):
        check(ecp_server.caller(tenant, role).get("/v1/actions"), 200)
    problem(ecp_server.client.get("/v1/actions"), 401, "unauthenticated")
