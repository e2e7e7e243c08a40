"""Template repositories: immutable versions numbered per (tenant, name)."""

from typing import Any

import pytest

from ecp_core.canonical import json_digest
from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.templates.model import TemplateVersion
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.graphs import CODE_POINT_IDS
from ecp_core.testing.samples import NOW

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"category": {"type": "string", "default": "refund"}},
}
"""A parameters schema with one defaulted parameter."""


def template_graph(summary: str = "Approve") -> dict[str, Any]:
    """A template graph: a hole, a literal hole, numbers as accepted and an approval summary."""
    values = {
        "category": {"$param": "category"},
        "raw": {"$literal": {"$param": "x"}},
        "weights": [1.5, 1e16, 9007199254740991],
    }
    return {
        "entry": "a",
        "nodes": [
            {
                "id": "a",
                "kind": "action",
                "action": {"name": "set", "fingerprint": "set/1", "arguments": {"values": values}},
            },
            {"id": "b", "kind": "approval", "summary": summary, "rationale": "r"},
            {"id": "c", "kind": "end"},
        ],
        "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}],
        "max_steps": 10,
    }


def template_version(
    tenant: str = "t1", name: str = "tpl", version: int = 1, summary: str = "Approve"
) -> TemplateVersion:
    """A stored template version; its digest is its content's, as the service computes it."""
    graph = template_graph(summary)
    content = {"description": None, "parameters": PARAMETERS, "graph": graph}
    return TemplateVersion(
        tenant_id=tenant,
        name=name,
        version=version,
        digest=json_digest(content),
        description=None,
        parameters=PARAMETERS,
        graph=graph,
        created_at=NOW,
    )


class TemplateRepositoryConformance(StoreSuite):
    """Stored template versions: numbered per name, found by number, latest or digest."""

    @pytest.mark.spec("§2.1 create-template", "§5 tenant-isolation")
    def test_versions_read_back_by_number_latest_and_digest(self, uow: UnitOfWorkFactory) -> None:
        """Versions read back whole (holes and numbers as stored), per tenant."""
        first, second = template_version(), template_version(version=2, summary="Again")
        with uow() as tx:
            tx.templates.add(first)
            tx.templates.add(second)
            tx.commit()
        with uow() as tx:
            assert tx.templates.get("t1", "tpl", 1) == first
            assert tx.templates.get("t1", "tpl", 3) is None
            assert tx.templates.latest("t1", "tpl") == second
            assert tx.templates.find_digest("t1", "tpl", first.digest) == first
            assert tx.templates.find_digest("t1", "tpl", "sha256:none") is None
            assert tx.templates.get("t2", "tpl", 1) is None
            assert tx.templates.latest("t2", "tpl") is None
            assert tx.templates.find_digest("t2", "tpl", first.digest) is None

    @pytest.mark.spec("§2.1 create-template")
    def test_a_number_or_a_content_is_stored_once_per_name(self, uow: UnitOfWorkFactory) -> None:
        """A second equal version number, or the same content again, is a Conflict."""
        with uow() as tx:
            tx.templates.add(template_version())
            with pytest.raises(Conflict):
                tx.templates.add(template_version(summary="Other"))
            with pytest.raises(Conflict):
                tx.templates.add(template_version(version=2))
            tx.templates.add(template_version(name="other"))
            tx.templates.add(template_version(tenant="t2"))
            tx.commit()

    @pytest.mark.spec("§2.1 create-template")
    def test_an_uncommitted_version_is_not_kept(self, uow: UnitOfWorkFactory) -> None:
        """Leaving a unit of work without commit stores nothing."""
        with uow() as tx:
            tx.templates.add(template_version())
        with uow() as tx:
            assert tx.templates.latest("t1", "tpl") is None

    @pytest.mark.spec("§2.1 create-template", "C1 list-paging")
    def test_latest_page_lists_each_template_once_in_code_point_order(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The latest version of each of the tenant's templates, by name in code point order."""
        by_code_point = sorted(CODE_POINT_IDS)
        with uow() as tx:
            for name in CODE_POINT_IDS:
                tx.templates.add(template_version(name=name))
            tx.templates.add(template_version(name="g-a", version=2, summary="Again"))
            tx.templates.add(template_version(tenant="t2", name="g-other"))
            tx.commit()
        with uow() as tx:
            latest = tx.templates.latest_page("t1", limit=10)
            assert [v.name for v in latest] == by_code_point
            assert [v.version for v in latest if v.name == "g-a"] == [2]
            assert [v.name for v in tx.templates.latest_page("t1", limit=2)] == by_code_point[:2]
            after = tx.templates.latest_page("t1", limit=10, after="g-a")
            assert [v.name for v in after] == [n for n in by_code_point if n > "g-a"]
            assert [v.name for v in tx.templates.latest_page("t2", limit=10)] == ["g-other"]
            assert tx.templates.latest_page("t3", limit=10) == []
