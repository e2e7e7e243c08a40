"""Webhook secret rotation on every store: one previous secret, its expiry, and forgetting it."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.webhooks.samples import subscription
from ecp_core.testing.samples import NOW

DAY = timedelta(hours=24)
OLD, NEW, NEWEST = "first-secret-0123", "second-secret-0123", "third-secret-01234"


class WebhookSecretConformance(StoreSuite):
    """``rotate_secret`` keeps at most two secrets; ``drop_expired_secrets`` forgets the old one."""

    @pytest.mark.spec("C11 secret-rotation")
    def test_a_rotation_keeps_the_current_secret_as_the_previous_one(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The current secret moves to the previous slot with its expiry; the new one is current."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1", secret=OLD))
            tx.commit()
        with uow() as tx:
            rotated = tx.webhooks.rotate_secret("t1", "sub-1", NEW, NOW + DAY)
            tx.commit()
        expected = attrs.evolve(
            subscription("sub-1", secret=NEW),
            previous_secret=OLD,
            previous_secret_expires_at=NOW + DAY,
        )
        assert rotated == expected
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") == expected
            assert tx.webhooks.subscriptions("t1") == [expected]

    @pytest.mark.spec("C11 secret-rotation")
    def test_a_rotation_during_the_overlap_drops_the_oldest_secret(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """At most two secrets: rotating again drops the oldest and restarts the overlap."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1", secret=OLD))
            tx.webhooks.rotate_secret("t1", "sub-1", NEW, NOW + DAY)
            tx.commit()
        later = NOW + timedelta(hours=1) + DAY
        with uow() as tx:
            again = tx.webhooks.rotate_secret("t1", "sub-1", NEWEST, later)
            tx.commit()
        assert again is not None
        assert (again.secret, again.previous_secret) == (NEWEST, NEW)
        assert again.previous_secret_expires_at == later

    @pytest.mark.spec("C11 secret-rotation", "§5 tenant-isolation")
    def test_only_a_live_subscription_of_the_tenant_rotates(self, uow: UnitOfWorkFactory) -> None:
        """Another tenant's, a deleted or an unknown subscription: None, and nothing changes."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            tx.webhooks.add_subscription(subscription("sub-2", offset=1))
            tx.webhooks.delete_subscription("t1", "sub-2")
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.rotate_secret("t2", "sub-1", "x" * 16, NOW + DAY) is None
            assert tx.webhooks.rotate_secret("t1", "sub-2", "x" * 16, NOW + DAY) is None
            assert tx.webhooks.rotate_secret("t1", "nope", "x" * 16, NOW + DAY) is None
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") == subscription("sub-1")

    @pytest.mark.spec("C11 secret-rotation")
    def test_expired_previous_secrets_are_forgotten(self, uow: UnitOfWorkFactory) -> None:
        """Expired at ``now`` (inclusive) is dropped, in every tenant; a live overlap is kept."""
        with uow() as tx:
            for subscription_id, tenant, hours in (("sub-1", "t1", 0), ("sub-2", "t2", 1)):
                tx.webhooks.add_subscription(subscription(subscription_id, tenant=tenant))
                expires = NOW + DAY + timedelta(hours=hours)
                tx.webhooks.rotate_secret(tenant, subscription_id, NEW, expires)
            tx.webhooks.add_subscription(subscription("sub-3", offset=2))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.drop_expired_secrets(NOW + DAY - timedelta(microseconds=1)) == 0
            assert tx.webhooks.drop_expired_secrets(NOW + DAY) == 1
            tx.commit()
        with uow() as tx:
            first = tx.webhooks.subscription("t1", "sub-1")
            second = tx.webhooks.subscription("t2", "sub-2")
            assert first == subscription("sub-1", secret=NEW)
            assert second is not None
            assert second.previous_secret == subscription("sub-2").secret
            assert tx.webhooks.subscription("t1", "sub-3") == subscription("sub-3", offset=2)
            assert tx.webhooks.drop_expired_secrets(NOW + DAY) == 0
            assert tx.webhooks.drop_expired_secrets(NOW + 2 * DAY) == 1

    def test_a_reused_subscription_id_starts_without_a_previous_secret(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A new subscription under a deleted one's id keeps nothing of the old secrets."""
        with uow() as tx:
            tx.webhooks.add_subscription(subscription("sub-1"))
            tx.webhooks.rotate_secret("t1", "sub-1", NEW, NOW + DAY)
            tx.webhooks.delete_subscription("t1", "sub-1")
            tx.webhooks.add_subscription(subscription("sub-1", offset=5))
            tx.commit()
        with uow() as tx:
            assert tx.webhooks.subscription("t1", "sub-1") == subscription("sub-1", offset=5)


__all__ = ["WebhookSecretConformance"]
