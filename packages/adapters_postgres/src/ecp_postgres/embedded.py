"""A private PostgreSQL under a data directory, started with the ``pgserver`` package.

Used when ``ECP_DATABASE_URL`` is unset: the server lives in ``<data_dir>/pg``, is reused across
restarts, and is stopped cleanly by :meth:`EmbeddedPostgres.stop`. ``pgserver`` comes with the
``embedded`` extra and is imported only when a server is started.

pgserver counts the processes using a server by pid in ``pg/.handle_pids.json`` and stops the
server when the last one lets go. A process that died without letting go (SIGKILL, a crash)
would stay counted forever, so every later stop would leave the server running; the pids of dead
processes are dropped before each start and stop.
"""

import json
import logging
import os
import pathlib
import subprocess
import time
import warnings
from types import TracebackType
from typing import Any, Self

from ecp_postgres.errors import DatabaseUnavailable

_HANDLES = ".handle_pids.json"
MISSING_PGSERVER = (
    "the embedded PostgreSQL needs the pgserver package: "
    "install ecp-postgres[embedded] or set ECP_DATABASE_URL"
)
"""The one line when no database URL is set and pgserver is not installed (an optional extra)."""


def _pgserver() -> Any:  # noqa: ANN401 - pgserver ships no type information
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); its fallback is fine.
    os.environ.setdefault("XDG_RUNTIME_DIR", os.environ.get("TMPDIR", "/tmp"))  # noqa: S108
    # pgserver logs every command it runs, and a failed start with the whole server log; its
    # failures reach the caller as DatabaseUnavailable (one line naming that log) instead.
    quiet = logging.getLogger("pgserver")
    quiet.propagate = False
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import pgserver  # noqa: PLC0415 - only needed when the embedded server is used
        except ModuleNotFoundError as exc:
            if exc.name != "pgserver":
                raise
            raise DatabaseUnavailable(MISSING_PGSERVER) from None

    return pgserver


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _why(exc: BaseException) -> str:
    """A short reason for a failed start."""
    if isinstance(exc, subprocess.CalledProcessError):
        command = exc.cmd[0] if isinstance(exc.cmd, list | tuple) else exc.cmd
        return f"{pathlib.Path(str(command)).name} exited with status {exc.returncode}"
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"{pathlib.Path(str(exc.cmd[0])).name} timed out after {exc.timeout:g} s"
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class EmbeddedPostgres:
    """A PostgreSQL server owned by this process, kept under ``data_dir/pg``."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        """Prepare (not start) a server under ``data_dir``."""
        self.pgdata = pathlib.Path(data_dir).resolve() / "pg"
        self._server: Any = None

    def start(self) -> str:
        """Start the server (or attach to the one already running there); return its URL.

        Raises :class:`DatabaseUnavailable` (one line, naming the server log) when it cannot start.
        """
        if self._server is None:
            pgserver = _pgserver()
            try:
                self.pgdata.parent.mkdir(parents=True, exist_ok=True)
                self._forget_dead_handles(pgserver)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
            except Exception as exc:
                message = f"the embedded PostgreSQL in {self.pgdata} did not start ({_why(exc)})"
                if (self.pgdata / "log").is_file():
                    message += f"; see {self.pgdata / 'log'}"
                raise DatabaseUnavailable(message) from exc
        return str(self._server.get_uri())

    def stop(self, wait_seconds: float = 15.0) -> None:
        """Stop the server when this was the last live handle to it, and wait until it has stopped.

        Another live process still using the server keeps it running.
        """
        if self._server is None:
            return
        pgserver = _pgserver()
        self._forget_dead_handles(pgserver)
        self._server.cleanup()
        self._server = None
        if self._handles():
            return
        deadline = time.monotonic() + wait_seconds
        while (self.pgdata / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _handles(self) -> list[int]:
        """The pids pgserver counts as using the server."""
        try:
            pids = json.loads((self.pgdata / _HANDLES).read_text())
        except (OSError, ValueError):
            return []
        return [pid for pid in pids if isinstance(pid, int)] if isinstance(pids, list) else []

    def _forget_dead_handles(self, pgserver: Any) -> None:  # noqa: ANN401 - untyped module
        """Drop the pids of processes that died while holding the server."""
        path = self.pgdata / _HANDLES
        if not path.exists():
            return
        with pgserver.PostgresServer._lock:  # noqa: SLF001 - pgserver's own inter-process lock
            alive = json.dumps([pid for pid in self._handles() if _alive(pid)])
            if path.read_text() != alive:
                path.write_text(alive)

    def __enter__(self) -> Self:
        """Start on entry."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop on exit."""
        self.stop()
