"""Graph, deployment and policy repositories."""

import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import deployment, graph_version, policy


class GraphRepositoryConformance(StoreSuite):
    """Stored graph versions: numbered per graph, found by number, latest or digest."""

    @pytest.mark.spec("C3 graph-registration")
    def test_graph_versions(self, uow: UnitOfWorkFactory) -> None:
        """Versions read back by number, latest and digest, per tenant."""
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

    @pytest.mark.spec("C3 graph-registration")
    def test_graph_version_numbers_are_unique(self, uow: UnitOfWorkFactory) -> None:
        """A graph version number is stored once."""
        with uow() as tx:
            tx.graphs.add(graph_version())
            with pytest.raises(Conflict):
                tx.graphs.add(graph_version())


class DeploymentRepositoryConformance(StoreSuite):
    """Deployments: one per reference and tenant."""

    @pytest.mark.spec("§4.1 create-deployment", "§5 tenant-isolation")
    def test_deployments_are_tenant_scoped_and_unique(self, uow: UnitOfWorkFactory) -> None:
        """Deployments are tenant scoped and unique."""
        with uow() as tx:
            tx.deployments.add(deployment())
            tx.deployments.add(deployment(tenant="t2"))
            with pytest.raises(Conflict):
                tx.deployments.add(deployment())
            tx.commit()
        with uow() as tx:
            assert tx.deployments.get("t1", "dep") == deployment()
            assert tx.deployments.get("t3", "dep") is None


class PolicyRepositoryConformance(StoreSuite):
    """Deployment policies: one per deployment, replaced whole."""

    @pytest.mark.spec("C3 deployment-policy")
    def test_policies_replace(self, uow: UnitOfWorkFactory) -> None:
        """Putting a policy replaces the deployment's policy; tenants are apart."""
        with uow() as tx:
            tx.policies.put(policy(version=1))
            tx.policies.put(policy(version=2))
            tx.commit()
        with uow() as tx:
            assert tx.policies.get("t1", "dep") == policy(version=2)
            assert tx.policies.get("t2", "dep") is None
