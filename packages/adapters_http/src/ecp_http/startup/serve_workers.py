"""``ecp serve --workers N``: N server processes on one listening socket and one database.

The parent has already done what happens once (:mod:`ecp_http.startup.serve`: lock the data directory,
bind the socket, start the embedded PostgreSQL, fill in development secrets, migrate). It hands
the ready settings to uvicorn's own supervisor (:class:`uvicorn.supervisors.Multiprocess`), which
spawns N processes sharing the socket. Each builds the app with :func:`worker_app`, an app
factory given the settings over the supervisor's pipe, so secrets never go into the environment.

The parent announces only once every worker serves; a worker that cannot start refuses the whole
start-up. While serving, the supervisor pings each worker and replaces one that died or hangs.
SIGINT or SIGTERM: every worker drains as a single server does, then the parent returns and the
embedded PostgreSQL stops. A worker whose parent is gone stops itself (ADR 0062).
"""

import contextlib
import functools
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ecp_core.errors import EcpError
from ecp_http.config.settings import Settings
from ecp_http.config.values import SettingsError
from ecp_http.startup.exits import RefusedToStart

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from uvicorn.supervisors import Multiprocess

log = logging.getLogger("ecp_http.serve")

STARTUP_SECONDS = 120.0
"""How long the parent waits for every worker to serve before it refuses to start."""

PARENT_CHECK_SECONDS = 1.0
"""How often a worker checks that its parent still runs."""

_SUPERVISE_SECONDS = 0.5  # the supervisor's own pace: signals handled, workers pinged


class WorkersRefused(RefusedToStart):
    """A worker process could not start; the parent stopped the others."""


class _WorkerPid(logging.Filter):
    """Adds ``worker_pid`` to every line: the workers share one stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.worker_pid = os.getpid()
        return True


def _stop_when_orphaned(parent: int) -> None:
    """SIGTERM this worker (a clean stop) once ``parent`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        log.warning("the ecp serve parent process is gone: stopping", extra={"parent": parent})
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="ecp-parent-watch", daemon=True).start()


def worker_app(settings: Settings) -> "Starlette":
    """The app of one worker process; uvicorn calls this factory in the worker.

    Logging is set up as the parent's, each line marked with the worker's pid. When the app
    cannot be built, one line says why and the worker exits with uvicorn's start-up failure
    status, which makes the parent refuse to start (or stop, for a replacement worker).
    """
    from uvicorn.config import STARTUP_FAILURE  # noqa: PLC0415 - in the worker only

    from ecp_http.logs import configure  # noqa: PLC0415
    from ecp_http.startup.app import create_app  # noqa: PLC0415

    configure(settings.log_format, settings.log_level).addFilter(_WorkerPid())
    logging.getLogger("uvicorn.access").propagate = False  # access_log=False, as uvicorn does it
    _stop_when_orphaned(os.getppid())
    try:
        return create_app(settings)
    except (SettingsError, RefusedToStart, EcpError) as exc:
        log.error("server process could not start", extra={"error": str(exc)})  # noqa: TRY400
    except Exception:
        log.exception("server process could not start")
    sys.exit(STARTUP_FAILURE)


@contextlib.contextmanager
def _signals_restored() -> Iterator[None]:
    """Put back the signal handlers the supervisor replaces."""
    from uvicorn.supervisors.multiprocess import SIGNALS  # noqa: PLC0415 - only when serving

    before = {signum: signal.getsignal(signum) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            if handler is not None:
                signal.signal(signum, handler)


def _all_serving(supervisor: "Multiprocess") -> bool:
    """Wait until every worker serves: True; False on a stop or a worker that failed or hung."""
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = list(supervisor.processes)
    while waiting:
        supervisor.handle_signals()
        if supervisor.should_exit.is_set():
            return False
        if time.monotonic() > deadline or any(p.exitcode is not None for p in waiting):
            return False
        waiting = [p for p in waiting if not p.is_ready(timeout=_SUPERVISE_SECONDS)]
    return True


def serve_workers(
    settings: Settings,
    sock: socket.socket,
    *,
    announce: Callable[[list[int]], None],
    stopped: Callable[[], bool],
) -> int:
    """Serve ``sock`` with ``settings.workers`` processes until SIGINT or SIGTERM; return 0.

    ``announce`` hears the workers' pids once all serve; ``stopped`` says whether a stop came
    before the supervisor took the signals over. Raises WorkersRefused when a worker cannot
    start (after stopping the others).
    """
    import uvicorn  # noqa: PLC0415 - only serving needs the server
    from uvicorn.supervisors import Multiprocess  # noqa: PLC0415

    config = uvicorn.Config(
        functools.partial(worker_app, settings),
        factory=True,
        workers=settings.workers,
        log_config=None,  # each worker installs the handler configure() makes
        access_log=False,  # the request middleware logs each request, with its id
        log_level=settings.log_level.lower(),
    )
    with _signals_restored():
        supervisor = Multiprocess(config, sockets=[sock])  # takes SIGINT, SIGTERM, SIGHUP ...
        if stopped():
            return 0
        supervisor.init_processes()
        try:
            serving = _all_serving(supervisor)
            if serving:
                announce([p.pid for p in supervisor.processes if p.pid is not None])
                while not supervisor.should_exit.wait(_SUPERVISE_SECONDS):
                    supervisor.handle_signals()
                    supervisor.keep_subprocess_alive()  # replaces a dead or hung worker
        finally:
            supervisor.terminate_all()  # SIGTERM: each worker drains, as one server does
            supervisor.join_all()
    if not serving and not supervisor.should_exit.is_set():
        raise WorkersRefused(
            "a server process could not start (its log line above says why); stopped the others"
        )
    return 0


__all__ = ["STARTUP_SECONDS", "WorkersRefused", "serve_workers", "worker_app"]
