"""CertificationRepository on the adapter under test: one per build, ordered pages, events appended."""

from datetime import timedelta

import attrs

from ecp_core.certification.model import (
    Certification,
    CertificationEvent,
    CertificationOverride,
    CertificationState,
    EventType,
    OverrideScope,
)
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW


def certification(
    number: int, *, tenant: str = "acme", app: str = "shop", ident: str | None = None
) -> Certification:
    """A buildable certification of commit ``c<number>``, id ``cert-<number>`` unless ``ident``."""
    return Certification(
        certification_id=ident or f"cert-{number:04d}",
        tenant_id=tenant,
        app_name=app,
        app_commit=f"c{number}",
        image_digest="sha256:" + f"{number:064x}",
        deployment_ref="refunds",
        state=CertificationState.BUILDABLE,
        created_at=NOW,
        updated_at=NOW,
    )


def event(
    of: Certification, number: int, event_type: EventType = EventType.CREATED
) -> CertificationEvent:
    """Event ``ev-<number>`` of ``of`` in its current state."""
    return CertificationEvent(
        event_id=f"ev-{number:04d}",
        certification_id=of.certification_id,
        tenant_id=of.tenant_id,
        event_type=event_type.value,
        actor_id="operator@acme",
        state=of.state,
        created_at=of.updated_at,
        workspace_id=of.workspace_id,
    )


OVERRIDE = CertificationOverride(
    scopes=(OverrideScope.POLICY_MISSING, OverrideScope.ATTESTATION_MISSING),
    reason="pilot",
    actor_id="admin@acme",
    created_at=NOW,
    expires_at=NOW + timedelta(days=3),
)


class CertificationRepositoryConformance(StoreSuite):
    """The certification repository's behaviour every adapter shares."""

    def test_one_certification_per_build_and_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A second add of a stored key or id writes nothing and says so; reads are per tenant."""
        stored = certification(1)
        with uow() as tx:
            assert tx.certifications.add(stored, event(stored, 1)) is True
            tx.commit()
        with uow() as tx:
            same_build = attrs.evolve(stored, certification_id="cert-9999")
            assert tx.certifications.add(same_build, event(same_build, 2)) is False
            same_id = certification(2, ident=stored.certification_id)
            assert tx.certifications.add(same_id, event(same_id, 3)) is False
            elsewhere = certification(1, tenant="other", ident="cert-other")
            assert tx.certifications.add(elsewhere, event(elsewhere, 4)) is True
            tx.commit()
        with uow() as tx:
            assert tx.certifications.find("acme", "shop", "c1", stored.image_digest) == stored
            assert tx.certifications.find("acme", "shop", "c2", stored.image_digest) is None
            assert tx.certifications.get("acme", stored.certification_id) == stored
            assert tx.certifications.get("other", stored.certification_id) is None
            assert tx.certifications.get("acme", "cert-9999") is None
            assert tx.certifications.events("acme", stored.certification_id) == [event(stored, 1)]
            assert tx.certifications.events("other", stored.certification_id) == []

    def test_saves_replace_the_record_and_append_events_in_order(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Every save appends its event after the others; the record round-trips whole."""
        stored = certification(1)
        later = NOW + timedelta(minutes=5)
        moved = attrs.evolve(
            stored,
            state=CertificationState.TEST_DEPLOYABLE,
            updated_at=later,
            override=OVERRIDE,
            workspace_id="ws-1",
            promotion_target_key="prod-eu",
        )
        with uow() as tx:
            tx.certifications.add(stored, event(stored, 1))
            tx.certifications.save(moved, event(moved, 2, EventType.TRANSITIONED))
            tx.certifications.save(moved, event(moved, 3, EventType.OVERRIDE_GRANTED))
            tx.commit()
        with uow() as tx:
            assert tx.certifications.get("acme", stored.certification_id, lock=True) == moved
            found = tx.certifications.events("acme", stored.certification_id)
            assert [e.event_id for e in found] == ["ev-0001", "ev-0002", "ev-0003"]
            assert found[1] == event(moved, 2, EventType.TRANSITIONED)

    def test_an_uncommitted_change_leaves_nothing(self, uow: UnitOfWorkFactory) -> None:
        """Leaving without commit drops the saved record and its event alike."""
        stored = certification(1)
        with uow() as tx:
            tx.certifications.add(stored, event(stored, 1))
            tx.commit()
        with uow() as tx:
            revoked = attrs.evolve(stored, state=CertificationState.REVOKED)
            tx.certifications.save(revoked, event(revoked, 2, EventType.TRANSITIONED))
        with uow() as tx:
            assert tx.certifications.get("acme", stored.certification_id) == stored
            assert len(tx.certifications.events("acme", stored.certification_id)) == 1

    def test_pages_go_by_id_in_code_point_order_with_filters(self, uow: UnitOfWorkFactory) -> None:
        """By id (``B`` before ``a``), after the cursor id, of one app and one state when asked."""
        ids = ["cert-a", "cert-B", "cert-c", "cert-D"]
        with uow() as tx:
            for number, ident in enumerate(ids):
                app = "shop" if number % 2 == 0 else "billing"
                stored = certification(number, ident=ident, app=app)
                if number == 2:
                    stored = attrs.evolve(stored, state=CertificationState.REVOKED)
                tx.certifications.add(stored, event(stored, number))
            other = certification(9, tenant="other", ident="cert-0")
            tx.certifications.add(other, event(other, 9))
            tx.commit()
        with uow() as tx:
            page = tx.certifications.page("acme", limit=3)
            assert [c.certification_id for c in page] == ["cert-B", "cert-D", "cert-a"]
            rest = tx.certifications.page("acme", limit=3, after="cert-a")
            assert [c.certification_id for c in rest] == ["cert-c"]
            shop = tx.certifications.page("acme", limit=10, app_name="shop")
            assert [c.certification_id for c in shop] == ["cert-a", "cert-c"]
            revoked = tx.certifications.page("acme", limit=10, state=CertificationState.REVOKED)
            assert [c.certification_id for c in revoked] == ["cert-c"]
            assert tx.certifications.page("acme", limit=10, app_name="none") == []


__all__ = ["OVERRIDE", "CertificationRepositoryConformance", "certification", "event"]
