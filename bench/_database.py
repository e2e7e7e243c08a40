"""Databases for the benchmarks: a server (``ECP_BENCH_DATABASE_URL`` or embedded) and fresh,
migrated databases on it that are dropped at the end. Imported by the bench scripts; not run."""

import contextlib
import itertools
import os
import pathlib
import shutil
import tempfile
import time
from collections.abc import Iterator

import psycopg

from ecp_postgres import EmbeddedPostgres, apply_migrations, create_database, drop_database

embedded_log: pathlib.Path | None = None
"""The embedded server's log file while :func:`server` runs one (``_pg_log`` reads it)."""


@contextlib.contextmanager
def server() -> Iterator[str]:
    """The maintenance URL: ``ECP_BENCH_DATABASE_URL``, or an embedded server's."""
    global embedded_log  # noqa: PLW0603 - one server per bench process
    configured = os.environ.get("ECP_BENCH_DATABASE_URL")
    if configured:
        print("server: ECP_BENCH_DATABASE_URL")
        yield configured
        return
    directory = tempfile.mkdtemp(prefix="ecp-bench-")
    embedded = EmbeddedPostgres(directory)
    try:
        started = time.perf_counter()
        url = embedded.start()
        embedded_log = embedded.pgdata / "log"
        print(
            f"server: embedded, in {directory} (started in {time.perf_counter() - started:.1f} s)"
        )
        yield url
    finally:
        embedded_log = None
        embedded.stop()
        shutil.rmtree(directory, ignore_errors=True)


class Databases:
    """Fresh databases on one server; :meth:`drop_all` drops every one."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.names: list[str] = []
        self._serial = itertools.count()

    def fresh(
        self, label: str, *, migrate: bool = True, template: str | None = None
    ) -> tuple[str, str]:
        """A new database (migrated, bare, or a copy of ``template``): its name and URL."""
        name = f"ecp_bench_{os.getpid()}_{label}_{next(self._serial)}"
        self.names.append(name)
        url = create_database(self.url, name, template=template)
        if migrate and template is None:
            apply_migrations(url)
        return name, url

    def drop_all(self) -> None:
        for name in reversed(self.names):
            try:
                drop_database(self.url, name)
            except psycopg.Error as exc:
                print(f"could not drop database {name}: {exc}")
        self.names.clear()
