"""A real PostgreSQL for tests: ``ECP_TEST_DATABASE_URL`` when set, else an embedded server.

One migrated template database per session; every test that asks gets a fresh copy of it.
"""

import itertools
import os
from collections.abc import Iterator
from datetime import datetime, timedelta

import psycopg
import pytest

from ecp_postgres import (
    EmbeddedPostgres,
    PostgresStore,
    apply_migrations,
    create_database,
    drop_database,
)

TEMPLATE = "ecp_test_template"
_names = itertools.count()


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory) -> Iterator[str]:
    """URL of the server's maintenance database."""
    configured = os.environ.get("ECP_TEST_DATABASE_URL")
    if configured:
        yield configured
        return
    server = EmbeddedPostgres(tmp_path_factory.mktemp("ecp-pg"))
    yield server.start()
    server.stop()


@pytest.fixture(scope="session")
def migrated_template(postgres_url) -> str:
    """Name of a template database with every migration applied."""
    drop_database(postgres_url, TEMPLATE)
    apply_migrations(create_database(postgres_url, TEMPLATE))
    return TEMPLATE


@pytest.fixture
def fresh_database(postgres_url, migrated_template) -> Iterator[str]:
    """URL of a new, migrated, empty database, dropped after the test."""
    name = f"ecp_test_{os.getpid()}_{next(_names)}"
    url = create_database(postgres_url, name, template=migrated_template)
    yield url
    drop_database(postgres_url, name)


@pytest.fixture(scope="module")
def two_databases(postgres_url, migrated_template) -> Iterator[list[str]]:
    """URLs of two new, migrated databases a module shares, dropped after it: a property plays
    the same operations through two ways of writing or reading, one on each, and compares."""
    names = [f"ecp_test_{os.getpid()}_{next(_names)}" for _ in range(2)]
    urls = [create_database(postgres_url, name, template=migrated_template) for name in names]
    yield urls
    for name in names:
        drop_database(postgres_url, name)


@pytest.fixture
def postgres_store(fresh_database) -> Iterator[PostgresStore]:
    """A store (connection pool) on a fresh database."""
    with PostgresStore(fresh_database, max_size=8) as store:
        yield store


EXECUTION_COLUMNS = (
    "tenant_id",
    "event_id",
    "digest",
    "workflow_id",
    "workflow_version",
    "occurred_at",
    "run_id",
    "attempt",
    "dimensions",
    "cost_usd",
    "cost_measurement",
    "cost_role",
    "charge_id",
    "metadata",
)


def copy_executions(database: str, count: int, *, start: datetime, metadata: str = "{}") -> None:
    """COPY ``count`` measured charges of 0.001 USD for acme, one per second from ``start``.

    Faster than the API by far, for the tests of the 50,000-event limits; ``metadata`` is the
    events' metadata as JSON text.
    """
    sql = f"COPY ecp_evidence_executions ({', '.join(EXECUTION_COLUMNS)}) FROM STDIN"
    with psycopg.connect(database) as conn, conn.cursor() as cursor:
        with cursor.copy(sql) as copy:
            for n in range(count):
                copy.write_row(
                    (
                        "acme",
                        f"bulk-{n}",
                        "sha256:" + f"{n:064x}",
                        "support",
                        "v1",
                        start + timedelta(seconds=n),
                        f"bulk-run-{n % 500}",
                        1,
                        "{}",
                        "0.001",
                        "measured",
                        "charge",
                        f"bulk-charge-{n}",
                        metadata,
                    )
                )
        conn.commit()
