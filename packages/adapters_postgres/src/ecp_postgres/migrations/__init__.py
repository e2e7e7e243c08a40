"""Yoyo migration chains, one folder per area, applied in dependency order."""

import contextlib
import pathlib
from collections.abc import Iterator
from typing import Any

from yoyo import get_backend, read_migrations

AREAS = ("core", "audit", "approvals", "identity", "retention", "webhooks", "econ")
"""Folders of migration chains; later areas (retention, webhooks, evidence …) append here."""

_HERE = pathlib.Path(__file__).parent


@contextlib.contextmanager
def _backend(url: str) -> Iterator[Any]:
    """A yoyo backend holding the migration lock, closed afterwards."""
    backend = get_backend(_yoyo_url(url))
    try:
        with backend.lock():
            yield backend
    finally:
        backend.connection.close()


def _yoyo_url(url: str) -> str:
    """Yoyo names the psycopg 3 driver ``postgresql+psycopg``."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def migrations():  # noqa: ANN201
    """Every migration of every area."""
    return read_migrations(*(str(_HERE / area) for area in AREAS))


def apply(url: str) -> list[str]:
    """Apply what is not yet applied; return the ids applied now."""
    with _backend(url) as backend:
        pending = backend.to_apply(migrations())
        backend.apply_migrations(pending)
    return [migration.id for migration in pending]


def rollback(url: str, count: int = 1) -> list[str]:
    """Roll back the last ``count`` applied migrations; return their ids."""
    with _backend(url) as backend:
        applied = backend.to_rollback(migrations())[:count]
        backend.rollback_migrations(applied)
    return [migration.id for migration in applied]


def status(url: str) -> list[tuple[str, bool]]:
    """Every migration id with whether it is applied, in application order."""
    every = migrations()
    with _backend(url) as backend:
        pending = {migration.id for migration in backend.to_apply(every)}
    return [(migration.id, migration.id not in pending) for migration in every]
