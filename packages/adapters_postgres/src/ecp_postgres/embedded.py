"""A private PostgreSQL under a data directory, started with the ``pgserver`` package.

Used when ``ECP_DATABASE_URL`` is unset: the server lives in ``<data_dir>/pg``, is reused across
restarts, and is stopped cleanly by :meth:`EmbeddedPostgres.stop`.
"""

import os
import pathlib
import time
import warnings
from types import TracebackType
from typing import Any, Self


def _pgserver() -> Any:  # noqa: ANN401 - pgserver ships no type information
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); its fallback is fine.
    os.environ.setdefault("XDG_RUNTIME_DIR", os.environ.get("TMPDIR", "/tmp"))  # noqa: S108
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver  # noqa: PLC0415 - only needed when the embedded server is used

    return pgserver


class EmbeddedPostgres:
    """A PostgreSQL server owned by this process, kept under ``data_dir/pg``."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        """Prepare (not start) a server under ``data_dir``."""
        self.pgdata = pathlib.Path(data_dir).resolve() / "pg"
        self._server: Any = None

    def start(self) -> str:
        """Start the server (or attach to the one already running there); return its URL."""
        if self._server is None:
            self.pgdata.parent.mkdir(parents=True, exist_ok=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._server = _pgserver().get_server(self.pgdata, cleanup_mode="stop")
        return str(self._server.get_uri())

    def stop(self, wait_seconds: float = 15.0) -> None:
        """Stop the server when this was the last handle to it, and wait until it has stopped.

        Another process still using the server keeps it running; then the wait just times out.
        """
        if self._server is None:
            return
        self._server.cleanup()
        self._server = None
        deadline = time.monotonic() + wait_seconds
        while (self.pgdata / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

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
