"""Every edge of the transition table through the service, on real facts in the memory store.

Each of the 25 (from, to) pairs is tried under three worlds: blocked (the deployment is
missing), test_deployable only (the attestation names another graph version), and production
ready. The certification is put in its ``from`` state through the repository; the move is then
asked for in its well-formed shape by an admin. Accepted exactly as the drawn table says, with
one event more; refused with none and nothing changed.
"""

import itertools

import attrs
import pytest
from tests.support.certification import ADMIN, DRAWN, World

from ecp_core.certification.model import CertificationState, EventType, TransitionRequest
from ecp_core.errors import CertificationBlocked, CertificationTransitionNotAllowed
from ecp_core.testing.conformance.certification import event

pytestmark = pytest.mark.unit

S = CertificationState
WORLDS = {
    "blocked": {"deployment_ref": "nowhere"},
    "test_deployable": {"attested": "pay@9"},
    "production_ready": {},
}
ORDER = list(WORLDS)


def _put_in(world: World, state: CertificationState) -> None:
    """Seed the certification in ``state`` (with an event saying so), as the store holds it."""
    with world.store.unit_of_work() as tx:
        stored = tx.certifications.get("acme", world.certification_id)
        assert stored is not None
        seeded = attrs.evolve(stored, state=state)
        tx.certifications.save(seeded, event(seeded, 99, EventType.TRANSITIONED))
        tx.commit()


@pytest.mark.spec("§3.4 certification-transitions", "§6.2 certification-events")
@pytest.mark.parametrize("facts", ORDER)
@pytest.mark.parametrize(("current", "to"), list(itertools.product(S, S)))
def test_every_edge_through_the_service(current, to, facts):
    world = World(**WORLDS[facts])
    _put_in(world, current)
    before = world.ecp.certifications.get("acme", world.certification_id)
    assert before.evaluation.test_deployable is (facts != "blocked")
    assert before.evaluation.production_ready is (facts == "production_ready")
    request = TransitionRequest(
        to=to,
        reason="because" if to is S.REVOKED else None,
        promotion_target_key="prod" if to is S.PROMOTED else None,
    )
    needs = DRAWN.get((current, to))
    allowed = needs == "nothing" or (needs is not None and ORDER.index(facts) >= ORDER.index(needs))
    if not allowed:
        expected = CertificationTransitionNotAllowed if needs is None else CertificationBlocked
        with pytest.raises(expected, match=f"{current.value} to {to.value}"):
            world.ecp.certifications.transition(ADMIN, world.certification_id, request)
        assert world.ecp.certifications.get("acme", world.certification_id) == before
        return
    after = world.ecp.certifications.transition(ADMIN, world.certification_id, request)
    assert after.state == to.value
    assert after.events[:-1] == before.events
    last = after.events[-1]
    assert (last.event_type, last.state, last.actor_id) == ("transitioned", to, ADMIN.subject)
    assert last.reason == request.reason
    assert last.promotion_target_key == request.promotion_target_key
