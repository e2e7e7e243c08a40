"""The clients and the server of ``bench/scale.py``: client loops that start and approve runs
(run in client processes), and ``ecp serve --workers N`` as a child process. Imported by the
bench; not run."""

from __future__ import annotations

import base64
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import httpx

from _cpu import process_seconds

ECP = pathlib.Path(sys.executable).with_name("ecp")
TENANT, DEPLOYMENT = "bench", "refunds"
JWT_SECRET = "bench-" + "s" * 40
SIGNING_KEY = base64.b64encode(bytes(range(11, 43))).decode("ascii")
START_SECONDS = 120.0


# -- the clients (in client processes) ------------------------------------------------------------


def one_run(http: httpx.Client, index: int, out: dict[str, Any]) -> bool:
    """Start a run, wait for its approval, approve it; record its id and latencies."""
    began = time.perf_counter()
    started = http.post(
        "/runs",
        json={"deployment_ref": DEPLOYMENT, "input": {"order": f"S-{index}"}},
        headers={"Prefer": "wait=10"},
    )
    out["start_s"].append(time.perf_counter() - began)
    run = started.json() if started.status_code == 201 else {}
    if "run_id" in run:
        out["ids"].append(run["run_id"])
    if run.get("status") != "waiting_approval":
        out["problems"].append(f"POST /runs: {started.status_code} {started.text[:160]}")
        return False
    began = time.perf_counter()
    resolved = http.post(
        f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
        json={"decision": "approve"},
    )
    out["resolve_s"].append(time.perf_counter() - began)
    if resolved.status_code != 200 or resolved.json().get("run", {}).get("status") != "completed":
        out["problems"].append(f"resolve: {resolved.status_code} {resolved.text[:160]}")
        return False
    return True


def client_share(
    base_url: str, token: str, threads: int, ready: threading.Barrier, seconds: float
) -> dict:
    """``threads`` client loops: one warm-up run each, then, once every loop of every client
    process and the bench have met at ``ready``, runs for ``seconds``."""
    cpu_before = time.process_time()
    out: dict[str, Any] = {"ids": [], "start_s": [], "resolve_s": [], "problems": []}
    done, finish, lock = [0], [0.0], threading.Lock()

    def loop(number: int) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=60.0) as http:
            try:
                one_run(http, -1, {**out, "start_s": [], "resolve_s": [], "problems": []})
            finally:
                ready.wait(START_SECONDS)
            end_at = time.monotonic() + seconds
            index = 0
            while time.monotonic() < end_at:
                index += 1
                ok = one_run(http, number * 1_000_000 + index, out)
                with lock:
                    done[0] += ok
                    finish[0] = max(finish[0], time.monotonic())

    workers = [threading.Thread(target=loop, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return {
        **out,
        "completed": done[0],
        "finish": finish[0],
        "cpu": time.process_time() - cpu_before,
    }


# -- the server ---------------------------------------------------------------------------------


class Served:
    """``ecp serve --port 0 --workers N`` on ``database_url``, its log in a temporary file."""

    def __init__(self, workers: int, database_url: str, data_dir: pathlib.Path) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="ecp-scale-", suffix=".log", delete=False)  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if not k.startswith("ECP_")}
        env |= {
            "ECP_DATABASE_URL": database_url,
            "ECP_DATA_DIR": str(data_dir),
            "ECP_JWT_SECRET": JWT_SECRET,
            "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            "ECP_LOG_FORMAT": "json",
        }
        self.process = subprocess.Popen(  # noqa: S603 - our own ecp command
            [str(ECP), "serve", "--port", "0", "--workers", str(workers)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.base_url, self.pids = "", [self.process.pid]
        deadline = time.monotonic() + START_SECONDS
        for line in self.process.stdout or ():  # ends when the server exits
            if line.startswith("ECP is serving on "):
                self.base_url = line.split()[4]
                if workers == 1:
                    break
            if line.split()[1:3] == ["server", "processes:"]:
                self.pids += [int(p) for p in line.split("pids ")[1].split(", ")]
                break
            if time.monotonic() > deadline:
                break
        if not self.base_url:
            self.stop()
            raise RuntimeError(f"ecp serve --workers {workers} did not start")

    def cpu_seconds(self) -> float | None:
        """CPU of the serving processes (with workers: the parent and each worker)."""
        found = [process_seconds(pid) for pid in self.pids]
        return None if None in found else sum(f for f in found if f is not None)

    def stop(self) -> None:
        """SIGTERM and wait; a stop that is not clean (exit status 0) is an error."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(60)
        if self.process.stdout is not None:
            self.process.stdout.close()
        text = pathlib.Path(self.log.name).read_text(errors="replace")
        self.log.close()
        pathlib.Path(self.log.name).unlink()
        if code != 0 or "Traceback" in text:
            raise RuntimeError(f"ecp serve exited with {code}; its log ends:\n{text[-3000:]}")
