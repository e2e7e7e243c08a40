"""The toy adapter checked by the conformance kit.

Run: ``pytest examples/conformance``. Each class picks a suite and says how to make the store
under test; the suite's tests (each with a one-line rule) then run against it.
"""

import pytest
from toy_adapter import ToyStore

from ecp_core.testing import (
    AttemptAtomicityConformance,
    GraphRepositoryConformance,
    UnitOfWorkConformance,
)


class OnToyStore:
    """The fixture every ``StoreSuite`` asks for: a factory over a fresh, empty store."""

    @pytest.fixture
    def uow(self):
        return ToyStore().unit_of_work


class TestToyGraphs(OnToyStore, GraphRepositoryConformance):
    """The toy's own repository."""


class TestToyUnitOfWork(OnToyStore, UnitOfWorkConformance):
    """Its transactions, across the toy's and the memory store's repositories."""


class TestToyAttempts(OnToyStore, AttemptAtomicityConformance):
    """A whole run on it: registering a graph reads and writes the toy's repository."""
