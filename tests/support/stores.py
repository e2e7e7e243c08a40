"""The stores the kit's suites run on here: in memory and on PostgreSQL.

Mix one of these in before a suite of :mod:`ecp_core.testing.conformance`; it supplies the
fixture the suite asks for.
"""

import contextlib
from collections.abc import Iterator

import pytest

from ecp_core.memory import MemoryStore
from ecp_postgres import PostgresStore


class OnEveryStore:
    """``uow`` on a fresh, empty store of each implementation."""

    @pytest.fixture(params=["memory", "postgres"])
    def uow(self, request):
        if request.param == "memory":
            return MemoryStore().unit_of_work
        return request.getfixturevalue("postgres_store").unit_of_work


@contextlib.contextmanager
def _pool(url: str) -> Iterator:
    # One connection, opened inside the example: a pool's background connects use ``random``,
    # which Hypothesis forbids while it draws the next example.
    with PostgresStore(url, min_size=1, max_size=1) as store:
        store.pool.wait()
        yield store.unit_of_work


class OnPostgresEachExample:
    """``open_store`` on one PostgreSQL database per test, a pool per example."""

    @pytest.fixture
    def open_store(self, fresh_database):
        return lambda: _pool(fresh_database)


class OnEveryStoreEachExample(OnPostgresEachExample):
    """``open_store`` on a new in-memory store per example, and on PostgreSQL as above."""

    @pytest.fixture(params=["memory", "postgres"])
    def open_store(self, request):
        if request.param == "memory":
            return lambda: contextlib.nullcontext(MemoryStore().unit_of_work)
        return lambda: _pool(request.getfixturevalue("fresh_database"))
