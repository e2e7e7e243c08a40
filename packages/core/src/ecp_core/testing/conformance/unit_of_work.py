"""The unit of work: commit keeps, leaving without commit rolls back, errors roll back.

And a node attempt's state change, audit record, chain head and events commit together or not
at all.
"""

from datetime import UTC, datetime, timedelta

import pytest

from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.run.model import Run
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import deployment, run
from ecp_core.testing.signers import FailingSigner
from ecp_core.webhooks import CreateSubscriptionRequest
from ecp_core.webhooks.model import WebhookEventType

GOOD = Ed25519Signer(bytes(range(3, 35)), key_id="good")


class UnitOfWorkConformance(StoreSuite):
    """A unit of work is one transaction over every port."""

    def test_commit_keeps_writes(self, uow: UnitOfWorkFactory) -> None:
        """What a unit of work wrote before commit is there for the next one."""
        with uow() as tx:
            tx.runs.add(run())
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") == run()

    def test_leaving_without_commit_rolls_back(self, uow: UnitOfWorkFactory) -> None:
        """Leaving a unit of work without commit undoes its writes, in every repository."""
        with uow() as tx:
            tx.runs.add(run())
            tx.deployments.add(deployment())
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") is None
            assert tx.deployments.get("t1", "dep") is None

    def test_an_error_rolls_back(self, uow: UnitOfWorkFactory) -> None:
        """An exception leaving the unit of work undoes its writes and propagates."""
        with pytest.raises(RuntimeError), uow() as tx:
            tx.runs.add(run())
            raise RuntimeError
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") is None

    def test_writes_after_a_commit_roll_back_alone(self, uow: UnitOfWorkFactory) -> None:
        """Writes after a commit roll back without undoing what was committed."""
        with uow() as tx:
            tx.runs.add(run("run-1"))
            tx.commit()
            tx.runs.add(run("run-2"))
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") is not None
            assert tx.runs.get("t1", "run-2") is None


def _started(uow: UnitOfWorkFactory) -> Run:
    """A started run of a two-node graph (``a`` sets x, ``b`` ends) for tenant ``t``."""
    ecp = Ecp.build(uow, signer=GOOD)
    graph = (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"x": 1}})
        .end("b")
        .chain("a", "b")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    started, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return started


class AttemptAtomicityConformance(StoreSuite):
    """A node attempt commits its state, audit record, chain head and events together."""

    @pytest.mark.spec("§6.2 audit-per-attempt")
    def test_a_failed_audit_write_leaves_the_run_untouched(self, uow: UnitOfWorkFactory) -> None:
        """An attempt whose audit write fails changes neither the run nor its chain."""
        started = _started(uow)
        broken = Ecp.build(uow, signer=FailingSigner(GOOD))
        with pytest.raises(RuntimeError, match="key store"):
            broken.runs.advance("t", started.run_id)
        assert broken.runs.get("t", started.run_id) == started
        with uow() as tx:
            assert tx.audit.head(started.run_id) is None
            assert tx.audit.for_run("t", started.run_id) == []
        healthy = Ecp.build(uow, signer=GOOD)
        done = healthy.runs.drive("t", started.run_id)
        assert done.status.value == "COMPLETED"
        assert done.attempts == 2
        assert healthy.audit.verify_run("t", started.run_id).verified

    @pytest.mark.spec("§6.1 lifecycle-events")
    def test_no_event_is_queued_for_a_change_that_did_not_commit(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A webhook delivery is queued only with the change it reports."""
        started = _started(uow)
        healthy = Ecp.build(uow, signer=GOOD)
        admin = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")
        healthy.webhooks.subscribe(
            admin,
            CreateSubscriptionRequest(
                deployment_ref="d",
                target_url="https://hooks.example.com/x",
                event_types=(WebhookEventType.RUN_STARTED, WebhookEventType.RUN_COMPLETED),
            ),
        )
        later = datetime.now(UTC) + timedelta(days=1)
        with pytest.raises(RuntimeError):
            Ecp.build(uow, signer=FailingSigner(GOOD)).runs.advance("t", started.run_id)
        with uow() as tx:
            assert tx.webhooks.claim_due(later, 10) == []
        healthy.runs.drive("t", started.run_id)
        with uow() as tx:
            queued = tx.webhooks.claim_due(later, 10)
        assert [d.event_type.value for d in queued] == ["run.started", "run.completed"]
        assert len({d.event_id for d in queued}) == 2
