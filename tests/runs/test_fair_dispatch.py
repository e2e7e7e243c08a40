"""Fair dispatch on PostgreSQL with the real dispatcher: a deep backlog cannot starve a tenant."""

import time

import psycopg
import pytest
from psycopg.rows import dict_row
from tests.support.runs import deploy_three_steps

from ecp_core import Ecp, Ed25519Signer, StartRunRequest
from ecp_http.background.dispatch import Dispatcher
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(11, 43)), key_id="fair")


def test_a_new_run_completes_while_another_tenants_backlog_waits(fresh_database):
    with PostgresStore(fresh_database) as store:
        ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
        deploy_three_steps(ecp, "a", "b")
        for _ in range(200):
            ecp.runs.start("a", StartRunRequest(deployment_ref="d"))
        newcomer, _ = ecp.runs.start("b", StartRunRequest(deployment_ref="d"))
        dispatcher = Dispatcher(ecp.runs, workers=2, poll_seconds=0.02)
        dispatcher.start()
        try:
            deadline = time.monotonic() + 120
            while ecp.runs.get("b", newcomer.run_id).status.value != "COMPLETED":
                assert time.monotonic() < deadline, "timed out"
                time.sleep(0.02)
        finally:
            dispatcher.stop()
        finished = ecp.runs.get("b", newcomer.run_id).updated_at
        with psycopg.connect(fresh_database, row_factory=dict_row) as conn:
            (row,) = conn.execute(
                "SELECT count(*) AS n FROM ecp_runs"
                " WHERE tenant_id = 'a' AND status = 'COMPLETED' AND updated_at <= %s",
                (finished,),
            ).fetchall()
        # Three attempts of b's run took turns with a's: a few of a's runs finished meanwhile.
        assert row["n"] < 20
