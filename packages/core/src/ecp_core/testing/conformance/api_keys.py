"""ApiKeyRepository: tenant-scoped reads, lookup by hash across tenants, revocation, paging."""

from datetime import datetime, timedelta

import attrs
import pytest

from ecp_core.api_keys import ApiKey, hash_key
from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.types import ServiceRole


def api_key(
    key_id: str = "abcdefgh",
    tenant: str = "t1",
    offset: int = 0,
    role: ServiceRole = ServiceRole.VIEWER,
    revoked_at: datetime | None = None,
) -> ApiKey:
    """A viewer key created ``offset`` seconds after :data:`NOW`."""
    return ApiKey(
        key_id=key_id,
        tenant_id=tenant,
        role=role,
        fingerprint=f"ecp_{key_id}",
        key_hash=hash_key(f"ecp_{key_id}_secret"),
        name=f"key {key_id}",
        created_at=NOW + timedelta(seconds=offset),
        created_by="admin@t1",
        revoked_at=revoked_at,
    )


class ApiKeyRepositoryConformance(StoreSuite):
    """API keys: tenant-scoped reads, lookup by hash across tenants, revocation, paging."""

    @pytest.mark.spec("§5 project-api-keys")
    def test_add_get_and_lookup_by_hash(self, uow: UnitOfWorkFactory) -> None:
        """A key is read back by tenant and id, and found by its hash across tenants."""
        key = api_key()
        with uow() as tx:
            tx.api_keys.add(key)
            tx.commit()
        with uow() as tx:
            assert tx.api_keys.get("t1", key.key_id) == key
            assert tx.api_keys.get("t2", key.key_id) is None
            assert tx.api_keys.by_hash(key.key_hash) == key
            assert tx.api_keys.by_hash(hash_key("ecp_abcdefgh_other")) is None

    def test_key_ids_and_hashes_are_unique(self, uow: UnitOfWorkFactory) -> None:
        """Key ids and hashes are unique."""
        key = api_key()
        with uow() as tx:
            tx.api_keys.add(key)
            with pytest.raises(Conflict):
                tx.api_keys.add(api_key(tenant="t2"))
            with pytest.raises(Conflict):
                tx.api_keys.add(attrs.evolve(api_key("zzzzzzzz"), key_hash=key.key_hash))
            tx.api_keys.add(api_key("bbbbbbbb"))
            tx.commit()
        with uow() as tx:
            assert [k.key_id for k in tx.api_keys.page("t1", limit=10)] == ["abcdefgh", "bbbbbbbb"]
            assert tx.api_keys.get("t1", "zzzzzzzz") is None

    @pytest.mark.spec("§5 project-api-keys", "§5 tenant-isolation")
    def test_revoke_sets_the_time_once_and_is_tenant_scoped(self, uow: UnitOfWorkFactory) -> None:
        """Revoke sets the time once and is tenant scoped."""
        with uow() as tx:
            tx.api_keys.add(api_key())
            tx.commit()
        first, later = NOW + timedelta(hours=1), NOW + timedelta(hours=2)
        with uow() as tx:
            assert tx.api_keys.revoke("t2", "abcdefgh", first) is None
            assert tx.api_keys.revoke("t1", "nosuchid", first) is None
            assert tx.api_keys.revoke("t1", "abcdefgh", first).revoked_at == first
            tx.commit()
        with uow() as tx:
            assert tx.api_keys.revoke("t1", "abcdefgh", later).revoked_at == first
            tx.commit()
        with uow() as tx:
            stored = tx.api_keys.get("t1", "abcdefgh")
            assert stored == api_key(revoked_at=first)
            assert tx.api_keys.by_hash(stored.key_hash).revoked_at == first

    def test_revocation_rolls_back_without_commit(self, uow: UnitOfWorkFactory) -> None:
        """Revocation rolls back without commit."""
        with uow() as tx:
            tx.api_keys.add(api_key())
            tx.commit()
        with uow() as tx:
            tx.api_keys.revoke("t1", "abcdefgh", NOW)
        with uow() as tx:
            assert tx.api_keys.get("t1", "abcdefgh").revoked_at is None

    @pytest.mark.spec("C1 list-paging")
    def test_page_orders_by_creation_then_id_and_continues_after_a_pair(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Page orders by creation then id and continues after a pair."""
        keys = [
            api_key("cccccccc", offset=0),
            api_key("aaaaaaaa", offset=5),
            api_key("bbbbbbbb", offset=5),
            api_key("dddddddd", offset=9),
            api_key("eeeeeeee", tenant="t2", offset=1),
        ]
        with uow() as tx:
            for key in keys:
                tx.api_keys.add(key)
            tx.commit()
        with uow() as tx:
            every = tx.api_keys.page("t1", limit=10)
            assert [k.key_id for k in every] == ["cccccccc", "aaaaaaaa", "bbbbbbbb", "dddddddd"]
            assert every[0] == keys[0]
            first = tx.api_keys.page("t1", limit=2)
            assert [k.key_id for k in first] == ["cccccccc", "aaaaaaaa"]
            rest = tx.api_keys.page("t1", limit=2, after=(first[-1].created_at, first[-1].key_id))
            assert [k.key_id for k in rest] == ["bbbbbbbb", "dddddddd"]
            assert (
                tx.api_keys.page("t1", limit=2, after=(rest[-1].created_at, rest[-1].key_id)) == []
            )
            assert [k.key_id for k in tx.api_keys.page("t2", limit=10)] == ["eeeeeeee"]
            assert tx.api_keys.page("t3", limit=10) == []

    def test_reads_are_detached(self, uow: UnitOfWorkFactory) -> None:
        """Each read returns a new object, never one the store keeps."""
        with uow() as tx:
            tx.api_keys.add(api_key())
            tx.commit()
        with uow() as tx:
            assert tx.api_keys.get("t1", "abcdefgh") is not tx.api_keys.get("t1", "abcdefgh")
