"""The point-in-time recovery drill: docs/production.md's archiving, base backup and recovery
blocks, run as written on a PostgreSQL of the test's own.

With archiving on (the first block), a server has runs waiting for an approval, a worker and a
timer when the base backup is taken (the second block); more runs are started after it (set A),
then a moment is chosen, then more runs come (set B). The recovery block rebuilds the database as
it stood at that moment in a new data directory, and a new server on it goes on: every run from
before the moment waits where it stood and completes, every chain verifies, new runs start, and
no run of set B exists, though its clients were answered. The transparency log went back with
it: the checkpoint signed after set B is no prefix of the recovered log's later ones.
"""

import base64
import pathlib
import time
from datetime import UTC, datetime

import httpx
import psycopg
import pytest
from tests.support.e2e_server import serving
from tests.support.guides import sh_blocks
from tests.support.runbook import (
    GRAPHS,
    Cluster,
    approve_each,
    charge_each,
    own_cluster,
    run_block,
    start,
    until,
)

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import verify_consistency
from ecp_core.transparency.notes import parse_note
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import apply_migrations, create_database

pytestmark = pytest.mark.e2e

PRODUCTION = pathlib.Path(__file__).parents[2] / "docs" / "production.md"
SECRET = "pitr-" + "s" * 40
TENANT = "pitr"
ADMIN = {"Authorization": "Bearer " + mint_token(SECRET, tenant=TENANT, roles=["admin"])}
WORKER = {"Authorization": "Bearer " + mint_token(SECRET, tenant=TENANT, roles=["worker"])}
# A word only each of the three blocks holds, in the page's order.
BLOCK_WORDS = ("archive_mode", "pg_basebackup", "recovery.signal")


def runbook() -> list[str]:
    """The archiving, base backup and recovery blocks of the page."""
    blocks = [
        block
        for block in sh_blocks(PRODUCTION.read_text())
        if any(word in block for word in BLOCK_WORDS)
    ]
    assert [word for block in blocks for word in BLOCK_WORDS if word in block] == list(BLOCK_WORDS)
    return blocks


def settings(database: str, artifacts: pathlib.Path) -> Settings:
    return Settings(
        database_url=database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(32))).decode("ascii"),
        artifacts_dir=artifacts,
        dispatch_poll_seconds=0.05,
        log_checkpoint_seconds=0.1,
    )


def server_now(database: str) -> datetime:
    """The database server's clock, the one commit timestamps come from, in UTC."""
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0].astimezone(UTC)


def archive_current_segment(database: str) -> None:
    """Close the current WAL segment and wait until the archiver has copied it."""
    with psycopg.connect(database, autocommit=True) as conn:
        row = conn.execute("SELECT pg_walfile_name(pg_switch_wal())").fetchone()
        assert row is not None
        segment = str(row[0])

        def archived() -> bool:
            done = conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()
            return done is not None and done[0] is not None and done[0] >= segment

        until(archived, f"the archiver copied {segment}", seconds=30)


def checkpoint(client: httpx.Client, size: int = 0) -> Checkpoint:
    """The tenant's newest signed checkpoint, once it holds at least ``size`` leaves."""
    found: list[Checkpoint] = []

    def holds() -> bool:
        note = parse_note(client.get("/v1/log/checkpoint", headers=ADMIN).text)
        found.append(Checkpoint.parse(note.text))
        return found[-1].size >= size

    until(holds, f"a checkpoint of {size} leaves", seconds=20)
    return found[-1]


def consistent(client: httpx.Client, older: Checkpoint, newer: Checkpoint) -> bool:
    """Whether the served consistency proof shows ``older``'s tree a prefix of ``newer``'s."""
    span = {"from": older.size, "to": newer.size}
    proof = client.get("/v1/log/proof/consistency", params=span, headers=ADMIN).json()
    path = [base64.b64decode(line) for line in proof["hashes"]]
    return verify_consistency(older.size, newer.size, path, older.root, newer.root)


def new_database(cluster: Cluster, archive_block: str) -> str:
    """The cluster's first data directory, with WAL archiving on (the archiving block) and
    running: a migrated database on it."""
    pgdata = cluster.initdb("data")
    archive = {"PGDATA": str(pgdata), "WAL_ARCHIVE": str(cluster.folder / "wal-archive")}
    run_block(archive_block, archive, user=cluster.user)
    cluster.start(pgdata)
    database = create_database(cluster.url("postgres"), "ecp")
    apply_migrations(database)
    return database


@pytest.mark.spec("C19 point-in-time-drill")
def test_a_recovery_to_a_moment_keeps_the_runs_before_it_and_none_after(tmp_path):
    archive_block, backup_block, recover_block = runbook()
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    with own_cluster() as cluster:
        database = new_database(cluster, archive_block)
        backups = cluster.mkdir("backup")
        with serving(lambda _: settings(database, artifacts)) as (_, client, _):
            for graph in GRAPHS:
                assert client.post("/v1/graphs", json=graph, headers=ADMIN).status_code == 201
                body = {"deployment_ref": graph["graph_id"], "graph_id": graph["graph_id"]}
                assert client.post("/v1/deployments", json=body, headers=ADMIN).status_code == 201
            before_backup = [start(client, "pay", "waiting_approval", ADMIN) for _ in range(2)]
            task = start(client, "charge", "waiting_task", ADMIN)
            timer = start(client, "later", "waiting_timer", ADMIN)
            backup = {"PG_BACKUP_URL": cluster.url("postgres"), "BACKUP_DIR": str(backups)}
            run_block(backup_block, backup, user=cluster.user)
            set_a = [start(client, "pay", "waiting_approval", ADMIN) for _ in range(3)]
            time.sleep(0.5)
            target = server_now(database)
            time.sleep(0.5)
            set_b = [start(client, "pay", "waiting_approval", ADMIN) for _ in range(5)]
            set_b.append(start(client, "charge", "waiting_task", ADMIN))
            runs = [*before_backup, task, timer, *set_a, *set_b]
            leaves = sum(
                len(client.get(f"/runs/{run_id}/timeline", headers=ADMIN).json()["entries"])
                for run_id in runs
            )
            signed_last = checkpoint(client, leaves)  # set B's records are in the log
        archive_current_segment(database)
        cluster.stop(cluster.folder / "data")

        (base_backup,) = backups.iterdir()
        recovery = {
            "PGDATA": str(cluster.folder / "recovered"),
            "WAL_ARCHIVE": str(cluster.folder / "wal-archive"),
            "BASE_BACKUP": str(base_backup),
            "TARGET_TIME": str(target),
        }
        stopped = run_block(recover_block, recovery, user=cluster.user)
        assert "recovery stopping before" in stopped

        with serving(lambda _: settings(database, artifacts)) as (_, client, _):
            assert client.get("/health/ready").status_code == 200
            signed_at_recovery = checkpoint(client)
            assert signed_at_recovery.size < signed_last.size  # the log went back too
            for run_id in set_b:
                assert client.get(f"/runs/{run_id}", headers=ADMIN).status_code == 404
            after = start(client, "pay", "waiting_approval", ADMIN)
            approve_each(client, [*before_backup, *set_a, after], ADMIN)
            charge_each(client, [task], WORKER)

            def finished() -> bool:
                return all(
                    client.get(f"/runs/{run_id}", headers=ADMIN).json()["status"] == "completed"
                    for run_id in (task, timer)
                )

            until(finished, "the task's and the timer's runs completed on the recovery")
            while (grown := checkpoint(client)).size < signed_last.size:
                start(client, "pay", "waiting_approval", ADMIN)
            # The recovered log goes on from the moment: a checkpoint signed after it is a fork.
            assert consistent(client, signed_at_recovery, grown)
            assert not consistent(client, signed_last, grown)
            for ref in ("pay", "charge", "later"):
                verified = client.get(f"/deployments/{ref}/audits/verify", headers=ADMIN).json()
                assert verified["verified"] and verified["signature_verified"], verified
