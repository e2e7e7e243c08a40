"""Graph, deployment and policy repositories."""

import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import deployment, graph_version, policy

CODE_POINT_IDS = ("g-b", "g-B", "g-a", "g-Z", "g-_", "g-0", "g-.", "g-:")
"""Graph ids and refs (ASCII, as graph ids are) whose code point order differs from a locale's."""


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

    @pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
    def test_latest_page_lists_each_graph_once_in_code_point_order(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The latest version of each of the tenant's graphs, by graph id in code point order."""
        by_code_point = sorted(CODE_POINT_IDS)
        with uow() as tx:
            for graph_id in CODE_POINT_IDS:
                tx.graphs.add(graph_version(graph_id=graph_id))
            tx.graphs.add(graph_version(graph_id="g-a", version=2, summary="Again"))
            tx.graphs.add(graph_version(tenant="t2", graph_id="g-other"))
            tx.commit()
        with uow() as tx:
            latest = tx.graphs.latest_page("t1", limit=10)
            assert [v.graph_id for v in latest] == by_code_point
            assert [v.version for v in latest if v.graph_id == "g-a"] == [2]
            assert [v.graph_id for v in tx.graphs.latest_page("t1", limit=2)] == by_code_point[:2]
            after = tx.graphs.latest_page("t1", limit=10, after="g-a")
            assert [v.graph_id for v in after] == [i for i in by_code_point if i > "g-a"]
            assert [v.graph_id for v in tx.graphs.latest_page("t2", limit=10)] == ["g-other"]
            assert tx.graphs.latest_page("t3", limit=10) == []

    @pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
    def test_versions_page_lists_a_graphs_versions_oldest_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A graph's versions page oldest first, after a given version, in its tenant only."""
        with uow() as tx:
            for version in (3, 1, 2):
                tx.graphs.add(graph_version(version=version, summary=f"Approve {version}"))
            tx.graphs.add(graph_version(graph_id="h"))
            tx.commit()
        with uow() as tx:
            assert [v.version for v in tx.graphs.versions_page("t1", "g", limit=10)] == [1, 2, 3]
            assert [v.version for v in tx.graphs.versions_page("t1", "g", limit=2)] == [1, 2]
            later = tx.graphs.versions_page("t1", "g", limit=10, after=1)
            assert [v.version for v in later] == [2, 3]
            assert tx.graphs.versions_page("t1", "g", limit=10, after=3) == []
            assert tx.graphs.versions_page("t2", "g", limit=10) == []


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

    @pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
    def test_deployments_page_by_ref_in_code_point_order(self, uow: UnitOfWorkFactory) -> None:
        """The tenant's deployments page by ref in code point order, after a given ref."""
        by_code_point = sorted(CODE_POINT_IDS)
        with uow() as tx:
            for ref in CODE_POINT_IDS:
                tx.deployments.add(deployment(ref=ref))
            tx.deployments.add(deployment(tenant="t2", ref="dep-other"))
            tx.commit()
        with uow() as tx:
            refs = [d.deployment_ref for d in tx.deployments.page("t1", limit=10)]
            assert refs == by_code_point
            assert tx.deployments.page("t1", limit=3) == [
                deployment(ref=ref) for ref in by_code_point[:3]
            ]
            after = tx.deployments.page("t1", limit=10, after="g-a")
            assert [d.deployment_ref for d in after] == [i for i in by_code_point if i > "g-a"]
            assert [d.deployment_ref for d in tx.deployments.page("t2", limit=10)] == ["dep-other"]


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

    @pytest.mark.spec("C15 console-deployments")
    def test_policies_of_many_deployments_in_one_read(self, uow: UnitOfWorkFactory) -> None:
        """The policies of several deployments at once: those that have one, of this tenant."""
        with uow() as tx:
            tx.policies.put(policy(ref="a"))
            tx.policies.put(policy(ref="c", version=3))
            tx.policies.put(policy(tenant="t2", ref="b"))
            tx.commit()
        with uow() as tx:
            found = tx.policies.of_deployments("t1", ["a", "b", "c", "missing"])
            assert found == {"a": policy(ref="a"), "c": policy(ref="c", version=3)}
            assert tx.policies.of_deployments("t1", []) == {}
            assert tx.policies.of_deployments("t2", ["a", "b"]) == {"b": policy(tenant="t2", ref="b")}
