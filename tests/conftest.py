"""Shared test configuration: Hypothesis profiles and the PostgreSQL fixtures.

``HYPOTHESIS_PROFILE=thorough`` runs many more examples than the default ``fast`` profile.
"""

import os

from hypothesis import HealthCheck, settings
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

__all__ = [
    "fresh_database",
    "migrated_template",
    "postgres_store",
    "postgres_url",
    "two_databases",
]
