"""HTTP servers for the benchmarks: a bench script run again as a child process that serves an
ASGI app under uvicorn on a free loopback port. Imported by the bench scripts; not run."""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

STARTUP_SECONDS = 60.0


def ecp_app() -> Any:
    """The ECP app with its settings and logging from the environment (in the child only)."""
    from ecp_http import logs  # noqa: PLC0415 - the child needs it, the parent not
    from ecp_http.config.settings import Settings  # noqa: PLC0415
    from ecp_http.startup.app import create_app  # noqa: PLC0415

    settings = Settings.from_mapping(os.environ)
    logs.configure(settings.log_format, settings.log_level)  # as `ecp serve` does
    if os.environ.get("ECP_BENCH_MIGRATE") == "1":
        # An older tree on the PYTHONPATH (a bench's baseline) brings its own migrations.
        from ecp_postgres import apply_migrations  # noqa: PLC0415

        apply_migrations(os.environ["ECP_DATABASE_URL"])
    return create_app(settings)


def serve(app: Any) -> None:
    """Child mode: serve ``app`` under uvicorn on a free loopback port; print the port first."""
    import uvicorn  # noqa: PLC0415 - the child needs it, the parent not

    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only then; without
    # it Nagle's algorithm and delayed ACKs add 40 ms to every keep-alive request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    print(port, flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


class Child:
    """``script`` run again as a server process (``--serve``, or ``--serve kind``) that calls
    :func:`serve`; ready once ``live_path`` answers 200. Its log goes to a temporary file."""

    def __init__(
        self,
        script: str,
        env: Mapping[str, str],
        *,
        kind: str | None = None,
        live_path: str = "/health/live",
    ) -> None:
        path = pathlib.Path(script).resolve()
        self.name = "server" if kind is None else f"{kind} server"
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix=f"ecp-bench-{kind or path.stem}-", suffix=".log", delete=False
        )
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(path), "--serve", *([] if kind is None else [kind])],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        line = self.process.stdout.readline().strip() if self.process.stdout else ""
        if not line.isdigit():
            log = self.log_text()
            self.stop()
            raise RuntimeError(f"the {self.name} did not start:\n{log}")
        self.base_url = f"http://127.0.0.1:{line}"
        self._wait_until_live(live_path)

    def _wait_until_live(self, path: str) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        with httpx.Client(base_url=self.base_url, timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the {self.name} exited:\n{self.log_text()}")
                with contextlib.suppress(httpx.TransportError):
                    if client.get(path).status_code == 200:
                        return
                time.sleep(0.05)
        raise RuntimeError(f"the {self.name} did not answer {path}:\n{self.log_text()}")

    def cpu_seconds(self) -> float | None:
        """User + system CPU of the server process so far (Linux /proc; None elsewhere)."""
        try:
            stat = pathlib.Path(f"/proc/{self.process.pid}/stat").read_text()
        except OSError:
            return None
        fields = stat.rpartition(")")[2].split()  # after the command name: state is field 0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_text(self) -> str:
        self.log.flush()
        return pathlib.Path(self.log.name).read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM (uvicorn shuts down; ECP's lifespan drains its dispatcher), then wait."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                print(f"  the {self.name} did not stop within 30 s; killing it")
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        text = self.log_text()
        self.log.close()
        pathlib.Path(self.log.name).unlink()
        if self.process.returncode not in (0, -signal.SIGTERM) or "Traceback" in text:
            print(f"  the {self.name} exited with {self.process.returncode}; its log:")
            print("    " + text.strip().replace("\n", "\n    "))


@contextlib.contextmanager
def running_ecp(
    script: str, *, database_url: str, jwt_secret: str, signing_key: str
) -> Iterator[Child]:
    """``script`` run again as the ECP server (``--serve``) on ``database_url``; stopped at the
    end."""
    child = Child(
        script,
        {
            "ECP_DATABASE_URL": database_url,
            "ECP_JWT_SECRET": jwt_secret,
            "ECP_AUDIT_SIGNING_KEY": signing_key,
        },
    )
    try:
        yield child
    finally:
        child.stop()
