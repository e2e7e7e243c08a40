"""A full disk: PostgreSQL's data on a small filesystem this test makes (tmpfs) fills up.

The server answers 503 ``database_full`` (never a 500) while PostgreSQL cannot extend its files,
keeps nothing of a refused request, and goes on by itself once space is freed, with no restart:
every run it acknowledged completes and every chain verifies. The write-ahead log lives on
another volume, as docs/production.md advises: PostgreSQL stops itself when it cannot write WAL.
"""

import base64
import contextlib
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest
from tests.support.e2e_server import serving
from tests.support.runs import PAY_GRAPH

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import EmbeddedPostgres, apply_migrations, create_database

pytestmark = pytest.mark.e2e

SECRET = "disk-" + "s" * 40
ADMIN = {"Authorization": "Bearer " + mint_token(SECRET, tenant="disk", roles=["admin"])}
WAIT = {"Prefer": "wait=10"}
DISK_MB = 200
HEADROOM = 4 * 1024 * 1024
GRAPH = PAY_GRAPH


@contextlib.contextmanager
def small_disk() -> Iterator[pathlib.Path]:
    """A tmpfs of DISK_MB mounted on a short path (the server's socket lives under it)."""
    mount = pathlib.Path(tempfile.mkdtemp(prefix="ecp-disk-"))
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)],  # noqa: S607
        check=True,
        capture_output=True,
    )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)  # noqa: S607
        shutil.rmtree(mount, ignore_errors=True)


def owned_like(path: pathlib.Path, model: pathlib.Path) -> None:
    """Give ``path`` and everything under it the owner of ``model`` (PostgreSQL's own user)."""
    owner = model.stat()
    for item in [path, *path.rglob("*")]:
        os.chown(item, owner.st_uid, owner.st_gid)


@contextlib.contextmanager
def postgres_on(disk: pathlib.Path) -> Iterator[str]:
    """An embedded PostgreSQL whose data is on ``disk`` and whose WAL is on another volume."""
    server = EmbeddedPostgres(disk)
    server.start()
    server.stop()
    elsewhere = pathlib.Path(tempfile.mkdtemp(prefix="ecp-wal-"))
    wal = elsewhere / "pg_wal"
    shutil.move(server.pgdata / "pg_wal", wal)
    owned_like(elsewhere, server.pgdata)
    (server.pgdata / "pg_wal").symlink_to(wal)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(elsewhere, ignore_errors=True)


def fill(disk: pathlib.Path) -> pathlib.Path:
    """A file that leaves HEADROOM bytes free on ``disk``."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free - HEADROOM
    with filler.open("wb") as out:
        while free > 0:
            chunk = min(free, 1 << 20)
            out.write(b"\0" * chunk)
            free -= chunk
    return filler


def settings(url: str) -> Settings:
    return Settings(
        database_url=url,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(32))).decode("ascii"),
        dispatch_poll_seconds=0.05,
    )


@pytest.mark.spec("C19 full-disk")
def test_a_full_disk_is_a_503_and_the_service_goes_on_when_space_returns():
    if os.geteuid() != 0:
        pytest.fail("the full-disk test mounts a tmpfs and needs root (as CI has)")
    with small_disk() as disk, postgres_on(disk) as maintenance:
        url = create_database(maintenance, "ecp_full")
        apply_migrations(url)
        with serving(lambda _: settings(url)) as (_, client, _):
            assert client.post("/v1/graphs", json=GRAPH, headers=ADMIN).status_code == 201
            body = {"deployment_ref": "pay", "graph_id": "pay"}
            assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
            filler = fill(disk)
            acknowledged, refused = [], []
            payload = {"deployment_ref": "pay", "input": {"note": "x" * 200_000}}
            deadline = time.monotonic() + 120
            while len(refused) < 5:
                assert time.monotonic() < deadline, f"the disk never filled: {len(acknowledged)}"
                answer = client.post("/runs", json=payload, headers={**ADMIN, **WAIT})
                assert answer.status_code in {201, 503}, answer.text
                if answer.status_code == 201:
                    acknowledged.append(answer.json()["run_id"])
                else:
                    problem = answer.json()
                    assert problem["code"] in {"database_full", "database_unavailable"}, problem
                    assert answer.headers["Retry-After"]
                    refused.append(problem["code"])
            assert "database_full" in refused
            assert client.get("/health/live").status_code == 200

            filler.unlink()  # the operator frees space; nothing is restarted
            deadline = time.monotonic() + 60
            while True:
                answer = client.post("/runs", json=payload, headers={**ADMIN, **WAIT})
                assert answer.status_code in {201, 503}, answer.text
                if answer.status_code == 201:
                    acknowledged.append(answer.json()["run_id"])
                    break
                assert time.monotonic() < deadline, "the service did not come back"
                time.sleep(0.5)
            for run_id in acknowledged:  # a run acknowledged in the spell waits, never fails
                deadline = time.monotonic() + 60
                while (run := client.get(f"/runs/{run_id}", headers=ADMIN).json())["status"] in {
                    "pending",
                    "running",
                }:
                    assert time.monotonic() < deadline, run
                    time.sleep(0.2)
                assert run["status"] == "waiting_approval", run
                path = f"/deployments/pay/approvals/{run['pending_approval_ids'][0]}/resolve"
                done = client.post(path, json={"decision": "approve"}, headers={**ADMIN, **WAIT})
                assert done.json()["run"]["status"] == "completed", done.text
            listed = client.get("/admin/runs", params={"limit": 500}, headers=ADMIN).json()
            assert listed["total"] == len(acknowledged)  # a refused start left no run behind
            verified = client.get("/deployments/pay/audits/verify", headers=ADMIN).json()
            assert verified["verified"] and verified["record_count"] == 3 * len(acknowledged)
