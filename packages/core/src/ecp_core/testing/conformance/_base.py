"""What a conformance suite asks of the adapter under test: one or two fixtures to override."""

import os
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from ecp_core.ports.unit_of_work import UnitOfWorkFactory

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
"""The thorough Hypothesis profile is on: the property suites draw more examples."""

StoreOpener = Callable[[], AbstractContextManager[UnitOfWorkFactory]]
"""Opens the store under test for one Hypothesis example and closes it after.

The store may still hold what earlier examples of the same test wrote: the suites that use it
write under a new tenant each time, or clear what they need cleared through the ports.
"""


class StoreSuite:
    """A suite run on a fresh store per test: override the ``uow`` fixture."""

    @pytest.fixture
    def uow(self) -> UnitOfWorkFactory:
        """A factory of units of work over a fresh, empty store of the adapter under test."""
        raise NotImplementedError("override the uow fixture with your adapter's factory")


class ExampleStoreSuite:
    """A property suite that opens its store inside each example: override ``open_store``.

    A store opened in a fixture may start background threads (a connection pool's) that draw on
    ``random`` while Hypothesis generates the next example, which Hypothesis forbids.
    """

    @pytest.fixture
    def open_store(self) -> StoreOpener:
        """A callable opening the store under test for one example (see :data:`StoreOpener`)."""
        raise NotImplementedError("override the open_store fixture with your adapter's opener")
