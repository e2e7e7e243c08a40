"""Hosted accounts: role slugs from the provider, and activation over any sequence of logins."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.accounts import PROVIDER_ROLES, AccountService, VerifiedIdentity, provider_roles
from ecp_core.errors import UnknownRole
from ecp_core.memory import MemoryStore
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.types import ServiceRole

pytestmark = pytest.mark.unit

KNOWN = sorted(PROVIDER_ROLES)


@pytest.mark.spec("§5 unknown-role-slug")
@given(st.lists(st.sampled_from(KNOWN), min_size=1, max_size=6))
def test_known_slugs_name_their_roles_in_order_once(slugs):
    roles = provider_roles(slugs)
    assert roles == tuple(dict.fromkeys(ServiceRole(slug) for slug in slugs))


@pytest.mark.spec("§5 unknown-role-slug")
@given(
    st.lists(st.sampled_from(KNOWN), max_size=4),
    st.text(max_size=20).filter(lambda slug: slug not in PROVIDER_ROLES),
    st.data(),
)
def test_any_unknown_slug_is_refused(known, unknown, data):
    slugs = [*known]
    slugs.insert(data.draw(st.integers(0, len(slugs))), unknown)
    with pytest.raises(UnknownRole):
        provider_roles(slugs)


@pytest.mark.spec("§5 unknown-role-slug")
def test_internal_roles_and_no_role_are_refused():
    for slugs in (["operator"], ["worker"], ["member"], ["Admin"], []):
        with pytest.raises(UnknownRole):
            provider_roles(slugs)


def _identity(org: str) -> VerifiedIdentity:
    return VerifiedIdentity(
        provider="workos",
        organization_id=org,
        user_id="user",
        roles=(ServiceRole.ADMIN,),
        expires_at=datetime.now(UTC) + timedelta(minutes=5),
    )


@pytest.mark.spec("§3.6 first-login-trial", "§5 hosted-identity")
@given(st.lists(st.sampled_from(["org_a", "org_b", "org_c"]), min_size=1, max_size=12))
def test_any_sequence_of_logins_activates_each_organization_exactly_once(orgs):
    store = MemoryStore()
    service = AccountService(store.unit_of_work, SystemClock(), UuidV7Factory())
    seen: dict[str, str] = {}
    for org in orgs:
        signed = service.sign_in(_identity(org))
        assert signed.activated == (org not in seen)
        assert (signed.quickstart_key is not None) == signed.activated
        assert seen.setdefault(org, signed.tenant_id) == signed.tenant_id
    assert len(set(seen.values())) == len(seen)
    with store.unit_of_work() as tx:
        for tenant in seen.values():
            assert tx.subscriptions.get(tenant) is not None
            assert len(tx.api_keys.page(tenant, limit=10)) == 1
