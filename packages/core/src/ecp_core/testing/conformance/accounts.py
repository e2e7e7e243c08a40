"""IdentityBindingRepository, and activation's one transaction, on the adapter under test."""

import itertools
from datetime import timedelta

import pytest

from ecp_core.accounts import (
    QUICKSTART_KEY_NAME,
    AccountService,
    IdentityBinding,
    VerifiedIdentity,
)
from ecp_core.billing.model import TRIAL_DAYS, PlanName, SubscriptionStatus, trial_subscription
from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.types import ServiceRole


def binding(org: str = "org_1", tenant: str = "tn_1", provider: str = "workos") -> IdentityBinding:
    """A binding made at :data:`NOW`."""
    return IdentityBinding(provider=provider, organization_id=org, tenant_id=tenant, created_at=NOW)


def identity(org: str = "org_1", user: str = "user_1") -> VerifiedIdentity:
    """A verified admin of ``org``."""
    return VerifiedIdentity(
        provider="workos",
        organization_id=org,
        user_id=user,
        roles=(ServiceRole.ADMIN,),
        expires_at=NOW + timedelta(minutes=5),
    )


class _Ids:
    """Ids ``fixed-1``, ``fixed-2`` …: tenants are ``tn_fixed-<n>``."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def new_id(self) -> str:
        return f"fixed-{next(self._next)}"


def accounts(uow: UnitOfWorkFactory) -> AccountService:
    """The activation use case over ``uow`` at :data:`NOW`, with predictable tenant ids."""
    return AccountService(uow, FixedClock(NOW), _Ids())


class IdentityBindingConformance(StoreSuite):
    """Bindings: one per (provider, organization), a tenant bound once, rolled back with the unit."""

    @pytest.mark.spec("§5 hosted-identity")
    def test_a_binding_is_read_back_by_provider_and_organization(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A binding round-trips; another organization or provider has none."""
        with uow() as tx:
            tx.identity_bindings.add(binding())
            tx.commit()
        with uow() as tx:
            assert tx.identity_bindings.get("workos", "org_1") == binding()
            assert tx.identity_bindings.get("workos", "org_2") is None
            assert tx.identity_bindings.get("other", "org_1") is None

    @pytest.mark.spec("§5 hosted-identity")
    def test_an_organization_and_a_tenant_are_bound_once(self, uow: UnitOfWorkFactory) -> None:
        """Binding an organization again, or a bound tenant to another organization, conflicts."""
        with uow() as tx:
            tx.identity_bindings.add(binding())
            tx.commit()
        with uow() as tx:
            with pytest.raises(Conflict):
                tx.identity_bindings.add(binding(tenant="tn_2"))
            with pytest.raises(Conflict):
                tx.identity_bindings.add(binding(org="org_2"))
            tx.identity_bindings.add(binding(provider="other", tenant="tn_3"))
            tx.commit()
        with uow() as tx:
            assert tx.identity_bindings.get("workos", "org_1") == binding()

    def test_an_uncommitted_binding_is_rolled_back(self, uow: UnitOfWorkFactory) -> None:
        """A binding added in a unit left without commit is not kept."""
        with uow() as tx:
            tx.identity_bindings.add(binding())
        with uow() as tx:
            assert tx.identity_bindings.get("workos", "org_1") is None


class ActivationConformance(StoreSuite):
    """Activation binds, starts one trial and makes one Analyst key in one transaction."""

    @pytest.mark.spec("§3.6 first-login-trial", "§9.1 hosted-activation")
    def test_the_first_login_activates_once(self, uow: UnitOfWorkFactory) -> None:
        """The first login makes a binding, a 14-day trial and one Analyst key; later, nothing."""
        service = accounts(uow)
        first = service.sign_in(identity())
        assert first.activated
        assert first.tenant_id == "tn_fixed-1"
        key = first.quickstart_key
        assert key is not None
        assert (key.role, key.name, key.tenant_id) == (
            ServiceRole.ANALYST,
            QUICKSTART_KEY_NAME,
            first.tenant_id,
        )
        again = service.sign_in(identity(user="user_2"))
        assert (again.tenant_id, again.activated, again.quickstart_key) == (
            first.tenant_id,
            False,
            None,
        )
        with uow() as tx:
            trial = tx.subscriptions.get(first.tenant_id)
            keys = tx.api_keys.page(first.tenant_id, limit=10)
        assert trial is not None
        assert (trial.plan, trial.status) == (PlanName.TRIAL, SubscriptionStatus.TRIALING)
        assert trial.period_end == NOW + timedelta(days=TRIAL_DAYS)
        assert [k.key_id for k in keys] == [key.key_id]
        assert service.tenant_of("workos", "org_1") == first.tenant_id

    @pytest.mark.spec("§5 hosted-identity")
    def test_each_organization_gets_its_own_tenant(self, uow: UnitOfWorkFactory) -> None:
        """Two organizations are two tenants, whoever logs in."""
        service = accounts(uow)
        one = service.sign_in(identity("org_1", user="same"))
        two = service.sign_in(identity("org_2", user="same"))
        assert one.tenant_id != two.tenant_id
        assert one.activated
        assert two.activated

    @pytest.mark.spec("§9.1 hosted-activation")
    def test_a_failing_activation_keeps_nothing(self, uow: UnitOfWorkFactory) -> None:
        """When the trial cannot be stored, neither the binding nor a key is kept."""
        with uow() as tx:  # the tenant id activation will pick already has a subscription
            tx.subscriptions.add(trial_subscription("tn_fixed-1", NOW))
            tx.commit()
        service = accounts(uow)
        with pytest.raises(Conflict):
            service.sign_in(identity())
        assert service.tenant_of("workos", "org_1") is None
        with uow() as tx:
            assert tx.api_keys.page("tn_fixed-1", limit=10) == []
