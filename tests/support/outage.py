"""A PostgreSQL of a test's own that the test stops and starts as an operator would (pg_ctl).

The outage tests (tests/server/test_database_outage.py, the TypeScript client's 503 storm) run a
dedicated embedded server, outside pytest's shared one, and stop it under a live ECP server.
"""

import os
import pathlib
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator

import pytest

from ecp_postgres import EmbeddedPostgres, apply_migrations, create_database

__all__ = ["PgCtl", "outage_database"]


class PgCtl:
    """``pg_ctl`` on an embedded server, with pgserver's binaries and as its system user."""

    def __init__(self, pgdata: pathlib.Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pgserver._commands import POSTGRES_BIN_PATH

        self.binary = pathlib.Path(POSTGRES_BIN_PATH) / "pg_ctl"
        self.pgdata = pgdata
        # As root, pgserver runs PostgreSQL as its own unprivileged user (postgres refuses root).
        self.user = "pgserver" if os.geteuid() == 0 else None
        self.socket_dir = (pgdata / "postmaster.pid").read_text().splitlines()[4]

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.binary), "-D", str(self.pgdata), "-w", "-t", "60", *args],
            user=self.user,
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=90,
        )

    def stop_fast(self) -> None:
        self._run("-m", "fast", "stop")

    def start(self) -> None:
        """Start as pgserver does: no TCP listener, the same socket folder, the same log."""
        log = str(self.pgdata / "log")
        self._run("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", log, "start")

    def crash_restart(self) -> None:
        self._run("-m", "immediate", "restart")


@pytest.fixture
def outage_database() -> Iterator[tuple[str, PgCtl]]:
    """A migrated database on a PostgreSQL of this test alone, and the pg_ctl that drives it."""
    folder = tempfile.mkdtemp(prefix="ecp-outage-")
    server = EmbeddedPostgres(folder)
    pg_ctl = None
    try:
        url = create_database(server.start(), "ecp_outage")
        apply_migrations(url)
        pg_ctl = PgCtl(server.pgdata)
        yield url, pg_ctl
    finally:
        # pgserver knows the first postmaster only: the one started here is stopped here.
        if pg_ctl is not None and (server.pgdata / "postmaster.pid").exists():
            pg_ctl.stop_fast()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
