"""Port contract suites run against every implementation: in memory and on PostgreSQL.

A behaviour the two disagree on is a bug in one of them.
"""

import pytest

from ecp_core.memory import MemoryStore


@pytest.fixture(params=["memory", "postgres"])
def uow(request):
    """A UnitOfWorkFactory over a fresh, empty store of each implementation."""
    if request.param == "memory":
        return MemoryStore().unit_of_work
    return request.getfixturevalue("postgres_store").unit_of_work
