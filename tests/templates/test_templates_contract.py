"""TemplateRepository: the kit's suite on memory and PostgreSQL, and concurrent creates."""

import threading

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.templates.model import CreateTemplateRequest
from ecp_core.testing.conformance.templates import (
    PARAMETERS,
    TemplateRepositoryConformance,
    template_graph,
)

pytestmark = pytest.mark.contract


class TestTemplateRepository(OnEveryStore, TemplateRepositoryConformance):
    pass


@pytest.mark.spec("§2.1 create-template")
def test_concurrent_creates_of_one_name_never_share_a_version_number(postgres_store):
    """Eight threads create four contents (two each) of one name at once on PostgreSQL.

    The unique keys refuse a second equal number or digest, and the loser retries: the four
    contents get versions 1 to 4, and each pair of equal requests got the same version.
    """
    ecp = Ecp.build(
        postgres_store.unit_of_work, signer=Ed25519Signer(bytes(range(9, 41)), key_id="tpl")
    )
    requests = [
        CreateTemplateRequest(
            name="tpl", parameters=PARAMETERS, graph=template_graph(summary=f"Approve {n}")
        )
        for n in range(4)
    ]
    start = threading.Barrier(8)
    answers: dict[int, list[int]] = {n: [] for n in range(4)}
    failures: list[BaseException] = []

    def create(n: int) -> None:
        start.wait(10)
        try:
            version, _ = ecp.templates.create("t1", requests[n])
            answers[n].append(version.version)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=create, args=(n % 4,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert all(len(set(got)) == 1 for got in answers.values())
    assert sorted(got[0] for got in answers.values()) == [1, 2, 3, 4]
    with postgres_store.unit_of_work() as tx:
        assert tx.templates.latest("t1", "tpl").version == 4
