"""``ecp serve``: lock the data directory, bind, start the database, announce, serve, stop.

Start-up goes in that order so that every refusal (another server on the data directory, a port
in use, an unreachable database) is one line before anything is announced. SIGINT and SIGTERM
stop the same way: uvicorn stops accepting and lets requests finish, the app's lifespan drains
run dispatch and webhook delivery, then the embedded PostgreSQL is stopped and the process exits
0. uvicorn re-raises the signal it caught once it is done; with the default SIGTERM disposition
that would kill the process before the embedded server is stopped, so the handlers installed here
only record the signal (and ask a running server to exit).

With ``--workers N`` (``ECP_WORKERS``) all of that happens once, in this process, which then
supervises N server processes on the same socket (:mod:`ecp_http.startup.serve_workers`, ADR 0062).
"""

import contextlib
import fcntl
import os
import pathlib
import re
import signal
import socket
import sys
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

from ecp_http.config.settings import Settings
from ecp_http.config.table.serving import DATABASE_URL
from ecp_http.server.auth import mint_token
from ecp_http.startup.exits import RefusedToStart

if TYPE_CHECKING:
    from uvicorn import Server

LOCK_FILE = "serve.lock"
"""Held (``flock``) by the one server using a data directory; the kernel releases it on exit."""

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_BACKLOG = 2048


class StartupRefused(RefusedToStart):
    """``ecp serve`` cannot start; the message is one line for the operator."""


class _Stops:
    """SIGINT and SIGTERM while serving: record the stop and ask the server, if any, to exit."""

    def __init__(self) -> None:
        self.requested = False
        self.server: Server | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002 - signal API
        self.requested = True
        if self.server is not None:
            self.server.should_exit = True

    def hand_to(self, server: "Server") -> None:
        """Let ``server`` see stops, including one that came before it existed."""
        self.server = server
        server.should_exit = server.should_exit or self.requested

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        before = {signum: signal.signal(signum, self.handle) for signum in _STOP_SIGNALS}
        try:
            yield
        finally:
            for signum, handler in before.items():
                signal.signal(signum, handler)


@contextlib.contextmanager
def data_dir_lock(data_dir: pathlib.Path) -> Iterator[None]:
    """Hold the data directory for this process; refuse when another process holds it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            pid = f" (pid {holder})" if re.fullmatch(r"[0-9]+", holder) else ""
            raise StartupRefused(
                f"the data directory {data_dir.resolve()} is in use by another ecp serve{pid}"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        os.close(fd)


def _say(line: str) -> None:
    """One start-up line on stdout (a command line's output, not a log record)."""
    sys.stdout.write(line + "\n")


def _display(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening; StartupRefused when that fails."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(_BACKLOG)
        except OSError:
            sock.close()
            raise
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise StartupRefused(f"cannot listen on {_display(host, port)}: {reason}") from None
    return sock


def _announce(
    settings: Settings, sock: socket.socket, *, embedded: bool, development_secret: bool
) -> None:
    """Say where the server listens; with a development JWT secret, also a token to try it with.

    A secret of the operator's own (``ECP_JWT_SECRET``) never gets an admin token printed: stdout
    ends up in logs, and the token would be a real one.
    """
    base = f"http://{_display(settings.host, sock.getsockname()[1])}"
    source = f"embedded PostgreSQL in {settings.data_dir / 'pg'}" if embedded else DATABASE_URL.name
    _say(f"ECP is serving on {base} (database: {source})")
    if development_secret and not settings.hosted.enabled and settings.jwt_secret:
        token = mint_token(settings.jwt_secret, tenant="dev", roles=["admin"], ttl_seconds=86400)
        _say("try it (a development admin token for tenant 'dev', valid for a day):")
        _say(f"  curl -s -H 'Authorization: Bearer {token}' {base}/admin/runs")
        _say(f"  open {base}/docs for the API")
    sys.stdout.flush()


def _serve_workers(
    ready: Settings, sock: socket.socket, stops: _Stops, *, embedded: bool, secret: str | None
) -> int:
    """``ready.workers`` processes on ``sock``, announced once all serve (ADR 0062)."""
    from ecp_http.startup.serve_workers import serve_workers  # noqa: PLC0415 - only with --workers

    def announce(pids: list[int]) -> None:
        _announce(ready, sock, embedded=embedded, development_secret=not secret)
        _say(f"{len(pids)} server processes: pids {', '.join(map(str, pids))}")
        sys.stdout.flush()

    return serve_workers(ready, sock, announce=announce, stopped=lambda: stops.requested)


def serve(settings: Settings) -> int:
    """Run the server until SIGINT or SIGTERM; return the exit code (0 after a clean stop).

    Raises StartupRefused, DatabaseUnavailable or SettingsError (one line each) before announcing.
    """
    import uvicorn  # noqa: PLC0415 - only serving needs the server and the app

    from ecp_http.logs import configure  # noqa: PLC0415
    from ecp_http.startup.bootstrap import provisioned  # noqa: PLC0415

    configure(settings.log_format, settings.log_level)  # once; uvicorn's lines included (ADR 0018)

    embedded = not settings.database_url
    stops = _Stops()
    with (
        stops.installed(),
        data_dir_lock(settings.data_dir),
        contextlib.closing(listening_socket(settings.host, settings.port)) as sock,
        provisioned(settings, _say) as ready,  # the URL in use and any development secrets
    ):
        if stops.requested:
            return 0
        if ready.workers > 1:  # the workers build the app; this process supervises them
            return _serve_workers(ready, sock, stops, embedded=embedded, secret=settings.jwt_secret)
        from ecp_http.startup.app import create_app  # noqa: PLC0415

        config = uvicorn.Config(
            create_app(ready),
            log_config=None,  # keep the handler configure() installed
            access_log=False,  # the request middleware logs each request, with its id
            log_level=ready.log_level.lower(),
        )
        server = uvicorn.Server(config)
        _announce(ready, sock, embedded=embedded, development_secret=not settings.jwt_secret)
        stops.hand_to(server)
        server.run(sockets=[sock])
    return 0
