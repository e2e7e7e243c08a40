"""CertificationRepository: the kit's suite on memory and PostgreSQL, and what only SQL can show.

PostgreSQL refuses to rewrite an event (a trigger), and the service's row lock makes concurrent
moves of one certification, and concurrent creations of one build, take turns.
"""

import threading
from datetime import UTC, datetime

import psycopg
import pytest
from tests.support.stores import OnEveryStore

from ecp_core.certification.model import (
    CertificationState,
    CreateCertificationRequest,
    TransitionRequest,
)
from ecp_core.certification.service import CertificationService
from ecp_core.certification_facts import DeploymentFacts
from ecp_core.errors import CertificationTransitionNotAllowed
from ecp_core.identity import ActorIdentity
from ecp_core.system import FixedClock, UuidV7Factory
from ecp_core.testing.conformance.certification import (
    CertificationRepositoryConformance,
    certification,
    event,
)
from ecp_core.types import AuthMethod, ServiceRole

pytestmark = [pytest.mark.contract, pytest.mark.spec("§6.2 certification-events")]

ADMIN = ActorIdentity(
    subject="admin@acme",
    auth_method=AuthMethod.BEARER,
    roles=(ServiceRole.ADMIN,),
    tenant_id="acme",
)
BUILD = CreateCertificationRequest(
    app_name="shop", app_commit="abc", image_digest="sha256:" + "a" * 64, deployment_ref="refunds"
)


class TestCertificationRepository(OnEveryStore, CertificationRepositoryConformance):
    pass


def _service(store) -> CertificationService:
    clock = FixedClock(datetime(2026, 11, 22, 5, 0, tzinfo=UTC))
    facts = DeploymentFacts(signer_available=True, keys=())
    return CertificationService(store.unit_of_work, clock, UuidV7Factory(), facts)


@pytest.mark.parametrize("statement", ["UPDATE {t} SET tenant_id = 'x'", "DELETE FROM {t}"])
def test_postgres_refuses_to_rewrite_an_event(postgres_store, statement):
    stored = certification(1)
    with postgres_store.unit_of_work() as tx:
        tx.certifications.add(stored, event(stored, 1))
        tx.commit()
    with (
        psycopg.connect(postgres_store.url) as conn,
        pytest.raises(psycopg.errors.RestrictViolation, match="append-only"),
    ):
        conn.execute(statement.format(t="ecp_certification_events"))
    with postgres_store.unit_of_work() as tx:
        assert tx.certifications.events("acme", stored.certification_id) == [event(stored, 1)]


def _together(count, work):
    """Run ``work(i)`` on ``count`` threads released at once; their results or errors."""
    start = threading.Barrier(count)
    results: list = [None] * count

    def one(i):
        start.wait(10)
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_racing_creations_of_one_build_store_one(postgres_store):
    service = _service(postgres_store)
    results = _together(4, lambda _: service.create(ADMIN, BUILD))
    assert sorted(created for _, created in results) == [False, False, False, True]
    assert len({answer.certification_id for answer, _ in results}) == 1
    assert all(len(answer.events) == 1 for answer, _ in results)


def test_racing_revocations_take_turns_and_only_one_is_applied(postgres_store):
    """Each mover holds the row: the first revokes, the others find it revoked and are refused."""
    service = _service(postgres_store)
    created, _ = service.create(ADMIN, BUILD)
    revoke = TransitionRequest(to=CertificationState.REVOKED, reason="compromised")
    results = _together(4, lambda _: service.transition(ADMIN, created.certification_id, revoke))
    refused = [r for r in results if isinstance(r, CertificationTransitionNotAllowed)]
    assert len(refused) == 3, results
    final = service.get("acme", created.certification_id)
    assert final.state == "revoked"
    assert [e.event_type for e in final.events] == ["created", "transitioned"]
