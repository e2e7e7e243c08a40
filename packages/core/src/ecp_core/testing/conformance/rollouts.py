"""Rollout repositories: one active rollout per deployment, arms and assignments read back."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.rollouts.assignment import first_buckets
from ecp_core.rollouts.model import Arm, Assignment, Rollout, RolloutStatus, RolloutUnit
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW, deployment, graph_version


def rollout(
    rollout_id: str = "r1",
    tenant: str = "t1",
    ref: str = "dep",
    weights: tuple[int, ...] = (90, 10),
) -> Rollout:
    """An active rollout of deployment ``ref`` over ``g@1``, ``g@2`` ..."""
    return Rollout(
        tenant_id=tenant,
        rollout_id=rollout_id,
        deployment_ref=ref,
        unit=RolloutUnit.SUBJECT,
        arms=tuple(
            Arm(index=i, graph_version_ref=f"g@{i + 1}", weight=w, buckets=b)
            for i, (w, b) in enumerate(zip(weights, first_buckets(weights), strict=True))
        ),
        status=RolloutStatus.ACTIVE,
        key="ab" * 32,
        created_at=NOW,
        updated_at=NOW,
    )


def assignment(unit: str, arm: int, seconds: int = 0, period: int = 1) -> Assignment:
    """An assignment of ``unit`` to ``arm`` in rollout ``r1`` of tenant ``t1``."""
    return Assignment(
        tenant_id="t1",
        rollout_id="r1",
        period=period,
        unit_id=unit,
        arm=arm,
        assigned_at=NOW + timedelta(seconds=seconds),
    )


class RolloutRepositoryConformance(StoreSuite):
    """Stored rollouts, their single active one per deployment, and first assignments."""

    @pytest.mark.spec("C17 rollout-create")
    def test_a_rollout_reads_back_whole_and_per_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A rollout reads back by id and as its deployment's active one, only in its tenant."""
        with uow() as tx:
            tx.rollouts.add(rollout())
            tx.commit()
        with uow() as tx:
            assert tx.rollouts.get("t1", "r1") == rollout()
            assert tx.rollouts.active("t1", "dep") == rollout()
            assert tx.rollouts.get("t2", "r1") is None
            assert tx.rollouts.active("t2", "dep") is None
            assert tx.rollouts.active("t1", "other") is None

    @pytest.mark.spec("C17 rollout-create")
    def test_one_active_rollout_per_deployment(self, uow: UnitOfWorkFactory) -> None:
        """A second active rollout of a deployment is a Conflict; after the end, one may start."""
        with uow() as tx:
            tx.rollouts.add(rollout())
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.rollouts.add(rollout("r2"))
        with uow() as tx:
            tx.rollouts.add(rollout("r2", ref="other"))
            tx.rollouts.add(rollout("r3", tenant="t2"))
            ended = attrs.evolve(
                rollout(), status=RolloutStatus.ENDED, promoted_graph_version_ref="g@2"
            )
            tx.rollouts.replace(ended)
            tx.rollouts.add(rollout("r4"))
            tx.commit()
        with uow() as tx:
            assert tx.rollouts.get("t1", "r1") == ended
            assert tx.rollouts.active("t1", "dep") == rollout("r4")
            page = tx.rollouts.page("t1", limit=2)
            assert [r.rollout_id for r in page] == ["r1", "r2"]
            assert [r.rollout_id for r in tx.rollouts.page("t1", limit=5, after="r2")] == ["r4"]

    @pytest.mark.spec("C17 rollout-assign", "C17 rollout-verify")
    def test_the_first_assignment_of_a_unit_in_a_period_is_kept(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A unit assigned again in its period reads back its first assignment."""
        with uow() as tx:
            tx.rollouts.add(rollout())
            assert tx.rollouts.assign(assignment("u1", 0, 5)) == assignment("u1", 0, 5)
            assert tx.rollouts.assign(assignment("u1", 1, 9)) == assignment("u1", 0, 5)
            tx.rollouts.assign(assignment("u2", 1, 1))
            tx.rollouts.assign(assignment("u1", 1, 20, period=2))
            tx.commit()
        with uow() as tx:
            got = tx.rollouts.assignments("t1", "r1", 1)
            assert got == [(1, NOW + timedelta(seconds=1)), (0, NOW + timedelta(seconds=5))]
            assert tx.rollouts.assignments("t1", "r1", 2) == [(1, NOW + timedelta(seconds=20))]
            assert tx.rollouts.assignments("t2", "r1", 1) == []

    @pytest.mark.spec("C17 rollout-compare")
    def test_a_units_arms_read_back_over_every_period(self, uow: UnitOfWorkFactory) -> None:
        """``unit_arms`` gives each asked-for unit every arm it had, in any period, per rollout."""
        with uow() as tx:
            tx.rollouts.add(rollout())
            tx.rollouts.add(rollout("r2", ref="other"))
            tx.rollouts.assign(assignment("u1", 0))
            tx.rollouts.assign(assignment("u1", 1, period=2))
            tx.rollouts.assign(assignment("u2", 1))
            tx.rollouts.assign(assignment("u2", 1, period=2))
            tx.rollouts.assign(assignment("u3", 0))
            tx.rollouts.assign(attrs.evolve(assignment("u4", 0), rollout_id="r2"))
            tx.commit()
        with uow() as tx:
            found = tx.rollouts.unit_arms("t1", "r1", ["u1", "u2", "u4", "none"])
            assert found == {"u1": frozenset({0, 1}), "u2": frozenset({1})}
            assert tx.rollouts.unit_arms("t1", "r1", []) == {}
            assert tx.rollouts.unit_arms("t2", "r1", ["u1"]) == {}

    @pytest.mark.spec("C17 rollout-end")
    def test_a_deployment_rebinds_to_another_graph_version(self, uow: UnitOfWorkFactory) -> None:
        """``rebind`` changes the version a deployment runs, and nothing else."""
        with uow() as tx:
            tx.graphs.add(graph_version())
            tx.graphs.add(graph_version(version=2, summary="Again"))
            tx.deployments.add(deployment())
            after = tx.deployments.rebind("t1", "dep", "g", 2)
            assert tx.deployments.rebind("t1", "none", "g", 2) is None
            assert tx.deployments.rebind("t2", "dep", "g", 2) is None
            tx.commit()
        expected = attrs.evolve(deployment(), graph_version=2, graph_version_ref="g@2")
        assert after == expected
        with uow() as tx:
            assert tx.deployments.get("t1", "dep") == expected
