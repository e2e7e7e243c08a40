"""Unit of work: commit keeps, leaving without commit rolls back, errors roll back."""

import pytest
from tests.contract.records import deployment, run


def test_commit_keeps_writes(uow):
    with uow() as tx:
        tx.runs.add(run())
        tx.commit()
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") == run()


def test_leaving_without_commit_rolls_back(uow):
    with uow() as tx:
        tx.runs.add(run())
        tx.deployments.add(deployment())
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") is None
        assert tx.deployments.get("t1", "dep") is None


def test_an_error_rolls_back(uow):
    with pytest.raises(RuntimeError), uow() as tx:
        tx.runs.add(run())
        raise RuntimeError
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") is None


def test_writes_after_a_commit_roll_back_alone(uow):
    with uow() as tx:
        tx.runs.add(run("run-1"))
        tx.commit()
        tx.runs.add(run("run-2"))
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") is not None
        assert tx.runs.get("t1", "run-2") is None
