"""Graph, deployment and policy repositories."""

import pytest
from tests.contract.records import deployment, graph_version, policy

from ecp_core.errors import Conflict


def test_graph_versions(uow):
    with uow() as tx:
        tx.graphs.add(graph_version(version=1))
        tx.graphs.add(graph_version(version=2, summary="Approve again"))
        tx.commit()
    with uow() as tx:
        assert tx.graphs.get("t1", "g", 1) == graph_version(version=1)
        assert tx.graphs.latest("t1", "g").version == 2
        assert tx.graphs.find_digest("t1", "g", graph_version(version=1).digest).version == 1
        assert tx.graphs.find_digest("t1", "g", "sha256:none") is None
        assert tx.graphs.get("t2", "g", 1) is None
        assert tx.graphs.latest("t2", "g") is None


def test_graph_version_numbers_are_unique(uow):
    with uow() as tx:
        tx.graphs.add(graph_version())
        with pytest.raises(Conflict):
            tx.graphs.add(graph_version())


def test_deployments_are_tenant_scoped_and_unique(uow):
    with uow() as tx:
        tx.deployments.add(deployment())
        tx.deployments.add(deployment(tenant="t2"))
        with pytest.raises(Conflict):
            tx.deployments.add(deployment())
        tx.commit()
    with uow() as tx:
        assert tx.deployments.get("t1", "dep") == deployment()
        assert tx.deployments.get("t3", "dep") is None


def test_policies_replace(uow):
    with uow() as tx:
        tx.policies.put(policy(version=1))
        tx.policies.put(policy(version=2))
        tx.commit()
    with uow() as tx:
        assert tx.policies.get("t1", "dep") == policy(version=2)
        assert tx.policies.get("t2", "dep") is None
