"""Tampering done with SQL on a real server's PostgreSQL database, each kind caught by verify-bundle.

A superuser connection changes the stored evidence the way an insider could: a record rewritten,
a chain's tail cut, two leaves swapped in the log. The bundle the server then serves fails
``ecp audit verify-bundle`` with the log key pinned from before, naming what broke.
"""

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from tests.support.console_browser import WAIT, Console, console_server
from tests.support.runs import PAY_GRAPH

from ecp_http.cli import main

pytestmark = pytest.mark.e2e

GRAPH = PAY_GRAPH


@pytest.fixture
def served(postgres_url: str, migrated_template: str) -> Iterator[Console]:
    with console_server(postgres_url, migrated_template, log_checkpoint_seconds=0.05) as server:
        admin = server.headers()
        assert server.client.post("/v1/graphs", json=GRAPH, headers=admin).status_code == 201
        body = {"deployment_ref": "pay", "graph_id": "pay"}
        assert server.client.post("/v1/deployments", json=body, headers=admin).status_code == 201
        yield server


def finished_run(server: Console) -> str:
    admin = server.headers()
    body = {"deployment_ref": "pay", "input": {"amount": 10}}
    run = server.client.post("/runs", json=body, headers={**admin, **WAIT}).json()
    (approval_id,) = run["pending_approval_ids"]
    path = f"/deployments/pay/approvals/{approval_id}/resolve"
    decided = server.client.post(path, json={"decision": "approve"}, headers={**admin, **WAIT})
    assert decided.status_code == 200, decided.text
    return str(run["run_id"])


def verdict(server: Console, run_id: str, vkey: str, capsys, tmp_path) -> dict[str, Any]:
    bundle = server.client.get(f"/runs/{run_id}/audit/bundle", headers=server.headers())
    assert bundle.status_code == 200, bundle.text
    path = tmp_path / f"{run_id}.json"
    path.write_text(bundle.text)
    status = main(["audit", "verify-bundle", str(path), "--log-key", vkey], environ={})
    report = json.loads(capsys.readouterr().out)
    assert (status == 0) == report["verified"]
    return report


def sql(server: Console, statement: str, *params: object) -> None:
    with psycopg.connect(server.database, autocommit=True) as conn:
        conn.execute(statement, params)


def log_key(server: Console) -> str:
    return str(
        server.client.get("/v1/log/keys", headers=server.headers()).json()["keys"][0]["vkey"]
    )


def verified_run(server: Console, capsys, tmp_path) -> tuple[str, str]:
    """A finished run whose bundle verifies before the damage, and the pinned log key."""
    vkey, run_id = log_key(server), finished_run(server)
    assert verdict(server, run_id, vkey, capsys, tmp_path)["verified"]
    return run_id, vkey


@pytest.mark.spec("C16 verify-bundle")
def test_a_rewritten_record_is_caught(served, capsys, tmp_path):
    run_id, vkey = verified_run(served, capsys, tmp_path)
    sql(
        served,
        "UPDATE ecp_audit_records SET status = 'denied' WHERE run_id = %s AND attempt = 2",
        run_id,
    )
    found = verdict(served, run_id, vkey, capsys, tmp_path)
    assert not found["chain_verified"] and found["failed_audit_id"] is not None


@pytest.mark.spec("C16 verify-bundle")
def test_a_cut_tail_is_caught(served, capsys, tmp_path):
    run_id, vkey = verified_run(served, capsys, tmp_path)
    sql(served, "DELETE FROM ecp_audit_records WHERE run_id = %s AND attempt = 3", run_id)
    sql(served, "UPDATE ecp_audit_heads SET attempt = 2 WHERE run_id = %s", run_id)
    found = verdict(served, run_id, vkey, capsys, tmp_path)
    assert found["chain_verified"] and not found["complete"]
    assert "stop short of its end" in found["error"]


@pytest.mark.spec("C16 verify-bundle")
def test_two_reordered_leaves_are_caught(served, capsys, tmp_path):
    run_id, vkey = verified_run(served, capsys, tmp_path)
    with psycopg.connect(served.database, autocommit=True) as conn:
        (first, one), (second, two) = conn.execute(
            "SELECT l.audit_id, l.leaf_index FROM ecp_log_leaves l JOIN ecp_audit_records r"
            " USING (audit_id) WHERE r.run_id = %s AND r.attempt IN (1, 2) ORDER BY r.attempt",
            (run_id,),
        ).fetchall()
        moved = "UPDATE ecp_log_leaves SET leaf_index = %s WHERE audit_id = %s"
        conn.execute(moved, (10**12, first))
        conn.execute(moved, (one, second))
        conn.execute(moved, (two, first))
    found = verdict(served, run_id, vkey, capsys, tmp_path)
    assert found["chain_verified"] and not found["included"]
    assert found["error"] == "not in the checkpoint's tree"
