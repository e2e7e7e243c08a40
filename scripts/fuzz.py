"""``make fuzz``: Schemathesis against a real ``ecp serve``, every check and every phase.

Starts the server on a fresh embedded database in a temporary data directory and a free loopback
port, mints a development admin token, runs ``schemathesis run`` over the server's own
``/openapi.json`` for a bounded time, and stops the server. The exit status is Schemathesis'.

    python scripts/fuzz.py [--max-time SECONDS] [extra schemathesis arguments ...]
"""

import argparse
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = pathlib.Path(sys.executable).parent
CONFIG = pathlib.Path(__file__).with_name("schemathesis.toml")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_live(base: str, server: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"fuzz: the server exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/health/live", timeout=2):  # noqa: S310 - loopback
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("fuzz: the server did not start")


def main() -> int:
    """Run the fuzzer; return its exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-time", type=int, default=int(os.environ.get("FUZZ_SECONDS", "300")))
    args, extra = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="ecp-fuzz-") as data_dir:
        port = _free_port()
        env = {
            **os.environ,
            "ECP_DATA_DIR": data_dir,
            "ECP_PORT": str(port),
            "ECP_LOG_LEVEL": "WARNING",
            "ECP_MAX_WAIT_SECONDS": "0",
        }
        env.pop("ECP_DATABASE_URL", None)
        server = subprocess.Popen([BIN / "ecp", "serve"], env=env, stdout=subprocess.DEVNULL)  # noqa: S603
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_live(base, server)
            token = subprocess.run(  # noqa: S603
                [BIN / "ecp", "token", "--tenant", "fuzz", "--role", "admin", "--ttl", "86400"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
            command = [
                str(BIN / "schemathesis"),
                f"--config-file={CONFIG}",
                "run",
                f"{base}/openapi.json",
                "--checks=all",
                "--phases=examples,coverage,fuzzing,stateful",
                f"--max-time={args.max_time}",
                "--workers=1",
                "--suppress-health-check=all",
                f"--header=Authorization: Bearer {token}",
                *extra,
            ]
            return subprocess.run(command, env=env, check=False).returncode  # noqa: S603
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)


if __name__ == "__main__":
    sys.exit(main())
