"""The run claim as a PostgreSQL function planned once per session (ADR 0065, migration
``core_0007_claim_function``); what it claims is the contract suite's (ADR 0019)."""

import psycopg
import pytest
from psycopg.rows import dict_row
from tests.support.runs import deploy_three_steps

from ecp_core import Ecp, Ed25519Signer, StartRunRequest
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(31, 63)), key_id="claims")


@pytest.mark.spec("C8 poison-runs")
def test_the_claim_keeps_one_generic_plan_and_still_takes_tenants_in_turn(fresh_database):
    with PostgresStore(fresh_database) as store:
        ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
        deploy_three_steps(ecp, "a", "b")
        first = [ecp.runs.start("a", StartRunRequest(deployment_ref="d"))[0] for _ in range(3)]
        other, _ = ecp.runs.start("b", StartRunRequest(deployment_ref="d"))
        claimed = []
        for _ in range(4):
            with store.unit_of_work() as uow:
                claim = uow.runs.claim_runnable(None)
                assert claim is not None
                claimed.append(claim.run_id)
                uow.commit()
    # a's oldest, then b (never served), then a's next ones: ADR 0019's order.
    assert claimed[:2] == [first[0].run_id, other.run_id]
    with psycopg.connect(fresh_database, row_factory=dict_row) as conn:
        (row,) = conn.execute(
            "SELECT proconfig FROM pg_proc WHERE proname = 'ecp_claim_runnable'"
        ).fetchall()
    assert row["proconfig"] == ["plan_cache_mode=force_generic_plan"]
