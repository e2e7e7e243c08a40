"""The core's use cases on PostgreSQL: a whole run, concurrency on one chain, tenant isolation."""

import threading

import pytest

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphDefinition,
    StartRunRequest,
    structure,
)
from ecp_core.audit import ChainHead, KeyRing, verify_chain
from ecp_core.audit.chain import seal
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.errors import ChainConflict, NotFound
from ecp_core.retention import ErasureRequest
from ecp_core.system import SystemClock
from ecp_core.types import AttemptStatus

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(1, 33)), key_id="pg-test")


@pytest.mark.spec("§3.1 approval-pauses-run", "§3.1 approve-continues-run")
def test_the_example_graph_end_to_end(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    ecp.graphs.register("t", structure(EXAMPLE_GRAPH, GraphDefinition))
    ecp.graphs.deploy(
        "t", CreateDeploymentRequest(deployment_ref="refunds", graph_id="refund-triage")
    )
    run, _ = ecp.runs.start(
        "t", StartRunRequest(deployment_ref="refunds", input={"order": "A-1", "score": 0.25})
    )
    run = ecp.runs.drive("t", run.run_id)
    assert run.public_status.value == "waiting_approval"
    actor = ActorIdentity(subject="r", auth_method=AuthMethod.BEARER, tenant_id="t")
    answer = ecp.resolve(
        actor,
        "refunds",
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, reason="ok"),
    )
    assert answer.run.status.value == "completed"
    assert answer.run.output == {
        "order": "A-1",
        "score": 0.25,
        "category": "refund",
        "to": "customer",
    }
    timeline = ecp.audit.timeline("t", run.run_id)
    assert [(e.node_id, e.status.value) for e in timeline.entries] == [
        ("classify", "succeeded"),
        ("review", "waiting_approval"),
        ("review", "approved"),
        ("notify", "succeeded"),
        ("done", "succeeded"),
    ]
    result = ecp.audit.verify_run("t", run.run_id)
    assert (result.verified, result.signature_verified, result.record_count) == (True, True, 5)
    request = ErasureRequest(run_id=run.run_id, reason="subject request")
    first = ecp.retention.request_erasure(actor, request).runs[0]
    assert (first.steps[0].step, first.steps[0].newly_erased) == ("crypto_erase_audits", 5)
    assert ecp.retention.request_erasure(actor, request).newly_erased == 0
    after = ecp.audit.verify_run("t", run.run_id)
    assert (after.verified, after.signature_verified, after.record_count) == (True, True, 5)
    assert all(
        e.erased and e.input_snapshot is None for e in ecp.audit.timeline("t", run.run_id).entries
    )
    with pytest.raises(NotFound):
        ecp.audit.verify_run("other", run.run_id)


@pytest.mark.spec("C7 numbers-as-accepted")
def test_exact_values_survive_storage(postgres_store):
    """Personal-data columns keep values exactly, so commitments still match after a round trip."""
    awkward = {
        "big": 1e300,
        "tiny": 5e-324,
        "neg_zero": -0.0,
        "text": "é\u2028\U0001f600",
        "n": 2**53 - 1,
    }
    record = seal(
        previous_record_digest=None,
        signer=SIGNER,
        created_at=SystemClock().now(),
        audit_id="a1",
        run_id="r1",
        tenant_id="t",
        deployment_ref="d",
        graph_version_ref="g@1",
        node_id="n",
        attempt=1,
        status=AttemptStatus.SUCCEEDED,
        input_snapshot=awkward,
        output_snapshot=[awkward],
        stdout="line\n",
    )
    with postgres_store.unit_of_work() as uow:
        uow.audit.append(record)
        uow.commit()
    with postgres_store.unit_of_work() as uow:
        stored = uow.audit.for_run("t", "r1")
        head = uow.audit.head("r1")
    assert stored == [record]
    assert verify_chain(stored, KeyRing.of([SIGNER]), scope="run:r1", head=head).verified


@pytest.mark.spec("C4 chain-per-run")
def test_many_writers_keep_one_chain_linear(postgres_store):
    writers, per_writer = 8, 10
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        written = 0
        while written < per_writer:
            try:
                with postgres_store.unit_of_work() as uow:
                    head = uow.audit.head("shared")
                    record = seal(
                        previous_record_digest=None if head is None else head.record_digest,
                        signer=SIGNER,
                        created_at=SystemClock().now(),
                        audit_id=f"w{worker}-{written}",
                        run_id="shared",
                        tenant_id="t",
                        deployment_ref="d",
                        graph_version_ref="g@1",
                        node_id=f"w{worker}",
                        attempt=1 if head is None else head.attempt + 1,
                        status=AttemptStatus.SUCCEEDED,
                        input_snapshot={"worker": worker, "n": written},
                    )
                    uow.audit.append(record)
                    uow.commit()
                written += 1
            except ChainConflict:
                continue  # lost the race for the first record; read the new head and retry
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)
                return

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with postgres_store.unit_of_work() as uow:
        records = uow.audit.for_run("t", "shared")
        head = uow.audit.head("shared")
    assert [r.attempt for r in records] == list(range(1, writers * per_writer + 1))
    assert head == ChainHead(
        run_id="shared", attempt=writers * per_writer, record_digest=records[-1].record_digest
    )
    assert verify_chain(records, KeyRing.of([SIGNER]), scope="run:shared", head=head).verified


def test_claims_skip_runs_another_worker_holds(postgres_store):
    from ecp_core.testing.samples import run

    with postgres_store.unit_of_work() as uow:
        uow.runs.add(run("run-1"))
        uow.runs.add(run("run-2"))
        uow.commit()
    with postgres_store.unit_of_work() as first, postgres_store.unit_of_work() as second:
        assert first.runs.claim_runnable().run_id == "run-1"
        assert second.runs.claim_runnable().run_id == "run-2"
        with postgres_store.unit_of_work() as third:
            assert third.runs.claim_runnable() is None
