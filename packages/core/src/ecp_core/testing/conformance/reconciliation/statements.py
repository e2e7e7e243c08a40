"""The statements repository on every store: exact round trip, one per identity, tenants apart."""

from datetime import timedelta

import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.model import SourceKind
from ecp_core.reconciliation.rules import statement_digest
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.reconciliation.samples import spelled, stored_statement


class StatementRepositoryConformance(StoreSuite):
    """Provider statements: exact round trip, one per identity, tenants apart."""

    @pytest.mark.spec("§2.9 statement-digest")
    def test_a_statement_round_trips_exactly(self, uow: UnitOfWorkFactory) -> None:
        """A statement round trips exactly."""
        stored = stored_statement()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(stored)
            tx.commit()
        with uow() as tx:
            found = tx.reconciliation.statement("t1", "openai", "openai-2026-11")
        assert found == stored
        assert [bucket.bucket_id for bucket in found.statement.buckets] == ["B", "b10", "b2"]
        assert spelled(found) == (
            "123456789012345.723456789012345679",
            ["0.60", "0.000000000000000001", "123456789012345.123456789012345678"],
            [(timedelta(0), timedelta(0))] * 3,
            (timedelta(0), timedelta(0)),
        )
        assert found.statement.buckets[2].period_start.microsecond == 999_999
        assert found.statement.buckets[1].model is None
        assert found.statement.buckets[1].provider_dimensions == {}
        # What was read back has the digest of what was written.
        assert statement_digest(found.statement) == stored.digest

    def test_a_statement_is_kept_only_when_committed(self, uow: UnitOfWorkFactory) -> None:
        """A statement is kept only when committed."""
        with uow() as tx:
            tx.reconciliation.add_statement(stored_statement())
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(stored_statement())
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is not None

    @pytest.mark.spec("§2.9 statement-digest")
    def test_the_same_identity_conflicts_and_the_first_statement_stays(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The same identity conflicts and the first statement stays."""
        first = stored_statement()
        with uow() as tx:
            tx.reconciliation.add_statement(first)
            tx.commit()
        other = stored_statement(source_kind=SourceKind.INVOICE)
        assert other.digest != first.digest
        for again in (other, first):  # other content, or the very same: the identity is taken
            with uow() as tx, pytest.raises(Conflict, match="statement openai-2026-11 of openai"):
                tx.reconciliation.add_statement(again)
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == first
            # The identity is (tenant, provider, statement_id): a neighbour in each part is new.
            neighbours = [
                stored_statement(provider="anthropic", source_kind=SourceKind.INVOICE),
                stored_statement(statement_id="openai-2026-11b", source_kind=SourceKind.INVOICE),
                stored_statement(statement_id="OPENAI-2026-11", source_kind=SourceKind.INVOICE),
            ]
            for neighbour in neighbours:
                tx.reconciliation.add_statement(neighbour)
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == first
            for neighbour in neighbours:
                statement = neighbour.statement
                found = tx.reconciliation.statement(
                    "t1", statement.provider, statement.statement_id
                )
                assert found == neighbour

    @pytest.mark.spec("§5 tenant-isolation")
    def test_statements_are_tenant_isolated(self, uow: UnitOfWorkFactory) -> None:
        """A statement is seen only by its tenant."""
        mine = stored_statement()
        theirs = stored_statement(tenant="t2", source_kind=SourceKind.INVOICE)
        with uow() as tx:
            tx.reconciliation.add_statement(mine)
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t2", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(theirs)  # the same provider and id in another tenant
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == mine
            assert tx.reconciliation.statement("t2", "openai", "openai-2026-11") == theirs
            assert tx.reconciliation.statement("t3", "openai", "openai-2026-11") is None
