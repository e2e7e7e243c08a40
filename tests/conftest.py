"""Shared test configuration: Hypothesis profiles, the kinds of test, and the shared fixtures.

Tests sit by area (``tests/<area>/``); each module says its kind with one marker (``unit``,
``contract``, ``integration`` or ``e2e``), so ``pytest -m unit`` runs the fast ones of every
area. ``HYPOTHESIS_PROFILE=thorough`` runs many more examples than the default ``fast`` profile.
"""

import os
import random
from pathlib import Path

import psycopg_pool.base
import pytest
from hypothesis import HealthCheck, settings
from tests.support.console_browser import console
from tests.support.e2e_server import admin, browser, e2e_database, ecp_server, tenant
from tests.support.outage import outage_database
from tests.support.postgres import (
    fresh_database,
    migrated_template,
    postgres_store,
    postgres_url,
    two_databases,
)

settings.register_profile(
    "fast", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# A connection pool jitters its connections' lifetimes with the shared ``random`` module; a
# pool working in a background thread (the e2e server's, which lives for the whole session)
# would touch that state while Hypothesis draws an example in another test, which Hypothesis
# refuses. The pools draw from a generator of their own instead.
psycopg_pool.base.random = random.Random().random  # type: ignore[attr-defined]

TESTS = Path(__file__).parent
KINDS = ("unit", "contract", "integration", "e2e")
"""The kinds of test: one marker each module carries (registered in pyproject.toml)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test under ``tests/`` that does not carry exactly one kind marker."""
    for item in items:
        if TESTS not in item.path.parents:
            continue  # the examples are the users' to copy
        kinds = {mark.name for mark in item.iter_markers() if mark.name in KINDS}
        if len(kinds) != 1:
            msg = f"{item.nodeid}: mark the module with one of {', '.join(KINDS)} (it has {sorted(kinds)})"
            raise pytest.UsageError(msg)


__all__ = [
    "admin",
    "browser",
    "console",
    "e2e_database",
    "ecp_server",
    "fresh_database",
    "migrated_template",
    "outage_database",
    "postgres_store",
    "postgres_url",
    "tenant",
    "two_databases",
]
