"""Evidence reads on an adapter equal the in-memory reference on random evidence.

The tally, in every grouping, granularity and cohort dimension, equals
:mod:`ecp_core.debugger.tally` (what the memory adapter runs); the provider events of
reconciliation equal :mod:`ecp_core.reconciliation.matching`'s.
"""

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.debugger.tally import Granularity, Grouping, Tally, TallyQuery
from ecp_core.memory import MemoryStore
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener
from ecp_core.testing.conformance._evidence import TenantEvidence, provider_events, store_evidence
from ecp_core.testing.conformance.evidence.drawn import evidence, tally_windows
from ecp_core.testing.conformance.evidence.samples import by_key, query

_tenants = itertools.count()


def _compare(
    stores: list[UnitOfWorkFactory],
    tenant: str,
    window: dict[str, Any],
    subset: set[Grouping],
) -> None:
    """The adapter (second of ``stores``) answers as the reference (first) does."""
    reconciled = ProviderWindow(
        provider="openai", start=window["start"], end=window["end"], as_of=window["as_of"]
    )
    reference, actual = (
        provider_events(unit_of_work, tenant, reconciled) for unit_of_work in stores
    )
    assert actual == reference
    for groupings in (frozenset(Grouping), frozenset(subset)):
        for granularity in Granularity:
            for dimension in (None, "k", "missing"):
                asked = query(
                    **window, groupings=groupings, granularity=granularity, dimension=dimension
                )
                expected, tallied = (
                    by_key(_tally(unit_of_work, tenant, asked)) for unit_of_work in stores
                )
                assert tallied == expected, asked


def _tally(unit_of_work: UnitOfWorkFactory, tenant: str, asked: TallyQuery) -> list[Tally]:
    with unit_of_work() as tx:
        return tx.evidence.tally(tenant, asked)


class EvidenceMatchesReference(ExampleStoreSuite):
    """The adapter's evidence reads equal the in-memory reference on random evidence."""

    @settings(
        max_examples=300 if THOROUGH else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=evidence(), window=tally_windows, subset=st.sets(st.sampled_from(Grouping)))
    def test_the_tally_and_provider_events_equal_the_reference(
        self,
        open_store: StoreOpener,
        data: TenantEvidence,
        window: dict[str, Any],
        subset: set[Grouping],
    ) -> None:
        """The tally (every grouping and mode) and the provider events equal the reference's."""
        # Each example is a new tenant of the one store (tenants never see each other's data).
        tenant = f"tenant-{next(_tenants)}"
        events, asserted, revised, definitions = data
        with open_store() as uow:
            stores = [MemoryStore().unit_of_work, uow]
            for unit_of_work in stores:
                store_evidence(unit_of_work, tenant, events, asserted, revised, definitions)
            _compare(stores, tenant, window, subset)
