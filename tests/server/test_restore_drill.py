"""The restore drill: docs/production.md's backup and restore blocks, run as written, under load.

A server has runs waiting for an approval, a worker and a timer, and webhook deliveries due (its
receiver answers 503), while clients keep starting runs; the backup block dumps it. A second
server on the restored database (the restore block) goes on: every run acknowledged before the
dump completes or waits where it stood, every chain verifies, and the deliveries that were due
arrive once the receiver answers.
"""

import base64
import os
import pathlib
import shutil
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from tests.support.e2e_server import serving
from tests.support.guides import sh_blocks
from tests.support.receiver import receiver
from tests.support.runbook import GRAPHS, approve_each, charge_each, run_block, start, until

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

PRODUCTION = pathlib.Path(__file__).parents[2] / "docs" / "production.md"
SECRET = "drill-" + "s" * 40
TENANT = "drill"
ADMIN = {"Authorization": "Bearer " + mint_token(SECRET, tenant=TENANT, roles=["admin"])}
WORKER = {"Authorization": "Bearer " + mint_token(SECRET, tenant=TENANT, roles=["worker"])}


def settings(database: str, artifacts: pathlib.Path) -> Settings:
    return Settings(
        database_url=database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(32))).decode("ascii"),
        artifacts_dir=artifacts,
        dispatch_poll_seconds=0.05,
        webhook_allow_private_targets=True,
        webhook_backoff_base_seconds=0.5,
        webhook_backoff_max_seconds=1.0,
        webhook_max_attempts=200,
    )


class Load:
    """Clients starting approval runs until stopped; the ids acknowledged, with when."""

    def __init__(self, base_url: str) -> None:
        self.acknowledged: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(base_url,), daemon=True)
        self._thread.start()

    def _run(self, base_url: str) -> None:
        with httpx.Client(base_url=base_url, timeout=30) as client:
            while not self._stop.is_set():
                run_id = start(client, "pay", "waiting_approval", ADMIN)
                self.acknowledged.append((time.monotonic(), run_id))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


@pytest.fixture
def databases(postgres_url: str, migrated_template: str) -> Iterator[tuple[str, str]]:
    names = [f"ecp_drill_{os.getpid()}_{side}" for side in ("source", "restored")]
    source = create_database(postgres_url, names[0], template=migrated_template)
    restored = create_database(postgres_url, names[1])  # empty, as the runbook asks
    yield source, restored
    for name in names:
        drop_database(postgres_url, name)


@pytest.mark.spec("C19 restore-drill")
def test_a_restored_backup_goes_on_where_it_stood(databases, tmp_path):
    source, restored = databases
    backup, artifacts = tmp_path / "backup", tmp_path / "artifacts"
    backup.mkdir()
    artifacts.mkdir()
    (artifacts / "acme").mkdir()
    (artifacts / "acme" / "report.txt").write_text("kept with the backup")
    backup_block, restore_block = (
        b for b in sh_blocks(PRODUCTION.read_text()) if "pg_dump" in b or "pg_restore" in b
    )
    with receiver(default=503) as hook:
        with serving(lambda _: settings(source, artifacts)) as (base_url, client, _):
            for graph in GRAPHS:
                assert client.post("/v1/graphs", json=graph, headers=ADMIN).status_code == 201
                body = {"deployment_ref": graph["graph_id"], "graph_id": graph["graph_id"]}
                assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
            subscription = {
                "deployment_ref": "pay",
                "target_url": hook.url,
                "event_types": ["approval.requested", "run.completed"],
            }
            made = client.post("/webhooks/subscriptions", json=subscription, headers=ADMIN)
            assert made.status_code == 201, made.text
            approvals = [start(client, "pay", "waiting_approval", ADMIN) for _ in range(3)]
            tasks = [start(client, "charge", "waiting_task", ADMIN) for _ in range(2)]
            timers = [start(client, "later", "waiting_timer", ADMIN) for _ in range(2)]
            until(lambda: len(hook.received) >= 3, "the receiver was tried")
            load = Load(base_url)
            until(lambda: len(load.acknowledged) >= 5, "the load started")
            dump_started = time.monotonic()
            values = {
                "ECP_DATABASE_URL": source,
                "ECP_ARTIFACTS_DIR": str(artifacts),
                "BACKUP_DIR": str(backup),
            }
            run_block(backup_block, values)
            load.stop()
        before_dump = [run_id for at, run_id in load.acknowledged if at < dump_started]
        assert len(before_dump) >= 5
        shutil.rmtree(artifacts)
        artifacts.mkdir()

        day = datetime.now(UTC).date().isoformat()
        listed = run_block(restore_block, {**values, "ECP_DATABASE_URL": restored, "DAY": day})
        assert "pending" not in listed and "applied" in listed
        assert (artifacts / "acme" / "report.txt").read_text() == "kept with the backup"

        hook.default = 200
        with serving(lambda _: settings(restored, artifacts)) as (_, client, _):
            assert client.get("/health/ready").status_code == 200
            waiting = [*approvals, *before_dump]
            approve_each(client, waiting, ADMIN)
            charge_each(client, tasks, WORKER)

            def finished() -> bool:
                return all(
                    client.get(f"/runs/{run_id}", headers=ADMIN).json()["status"] == "completed"
                    for run_id in [*waiting, *tasks, *timers]
                )

            until(finished, "every run completed on the restore")
            for ref in ("pay", "charge", "later"):
                verified = client.get(f"/deployments/{ref}/audits/verify", headers=ADMIN).json()
                assert verified["verified"] and verified["signature_verified"], verified

            def requested_arrived() -> bool:
                events = [r.body for r in hook.received if r.answered == 200]
                return all(any(run_id.encode() in body for body in events) for run_id in approvals)

            until(requested_arrived, "the deliveries due at the dump arrived after the restore")
