"""The run's lock finds every row it joins by index, however many runs there are.

``ecp_runs.run_id`` is ``COLLATE "C"`` and the audit head's and the approval's ``run_id`` use the
database's default collation; a join that compares them under the wrong collation cannot use the
other table's index and scans it whole, once per lock (it did: ADR 0067). With sequential scans
switched off, the planner still takes one only where no index can answer.
"""

import psycopg
import pytest

from ecp_core.testing.samples import approval, run
from ecp_postgres.runs import _CONTEXT, _LOCK, _LOCK_FOR_APPROVAL

pytestmark = pytest.mark.integration

STATEMENTS = {
    "lock": (_LOCK, ("run-1", "t1")),
    "lock for approval": (_LOCK_FOR_APPROVAL, {"approval_id": "ap-1", "tenant_id": "t1"}),
    "context of a run being added": (_CONTEXT, {"tenant_id": "t1", "deployment_ref": "dep"}),
}


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_the_run_lock_reads_every_joined_table_by_index(postgres_store, name):
    with postgres_store.unit_of_work() as uow:
        for index in range(50):
            uow.runs.add(run(f"run-{index}"))
        uow.approvals.add(approval())
        uow.commit()
    sql, params = STATEMENTS[name]
    with psycopg.connect(postgres_store.url) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN {sql}", params).fetchall())
    assert "Seq Scan" not in plan, plan
