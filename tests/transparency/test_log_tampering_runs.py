"""A whole run deleted, and a forked log, on a real server's PostgreSQL: both are caught.

A superuser connection does the damage. Deleting a run's rows leaves its leaves in the log, so an
audit export of the window names the leaves no record accounts for. Rebuilding the log without
the run (the insider holds the log's key too) shows a second history: once it grows back to the
size a witness cosigned, two checkpoints of that size with different roots exist. The witness
refuses the new one (422, counted), the server counts its refusal, and ``verify-bundle`` with the
witness's key pinned refuses every bundle of the forked log.
"""

import base64
import json
import re
import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest
from tests.support.console_browser import TENANT, Console, console_server
from tests.transparency.test_log_tampering import GRAPH, finished_run
from tests.transparency.test_witness_cli import _witness

from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.notes import NoteKey, NoteSigner, parse_note
from ecp_http.cli import main

pytestmark = pytest.mark.e2e

SEED = secrets.token_bytes(32)
ORIGIN = "log.test"
LOG_KEY = NoteSigner.from_seed(f"{ORIGIN}/{TENANT}", SEED).key


def served(postgres_url: str, template: str, **more: Any) -> Iterator[Console]:
    signing = base64.b64encode(SEED).decode("ascii")
    with console_server(
        postgres_url,
        template,
        log_checkpoint_seconds=0.05,
        log_origin=ORIGIN,
        audit_signing_key=signing,
        **more,
    ) as server:
        admin = server.headers()
        assert server.client.post("/v1/graphs", json=GRAPH, headers=admin).status_code == 201
        body = {"deployment_ref": "pay", "graph_id": "pay"}
        assert server.client.post("/v1/deployments", json=body, headers=admin).status_code == 201
        yield server


def verify(path, capsys, document: dict[str, Any], *flags: str) -> dict[str, Any]:
    path.write_text(json.dumps(document))
    status = main(["audit", "verify-bundle", str(path), "--log-key", LOG_KEY.vkey(), *flags], {})
    report = json.loads(capsys.readouterr().out)
    assert (status == 0) == report["verified"]
    return dict(report)


def delete_run(server: Console, run_id: str) -> None:
    """What an insider does to make a run disappear: its records, chain head and row."""
    with psycopg.connect(server.database, autocommit=True) as conn, conn.transaction():
        conn.execute("DELETE FROM ecp_audit_records WHERE run_id = %s", (run_id,))
        conn.execute("DELETE FROM ecp_audit_heads WHERE run_id = %s", (run_id,))
        conn.execute("DELETE FROM ecp_runs WHERE run_id = %s", (run_id,))


def export(server: Console, window: dict[str, str], path, capsys) -> dict[str, Any]:
    """``ecp audit export`` of the window against the live server, read back from its file."""
    token = server.headers()["Authorization"].removeprefix("Bearer ")
    flags = ["--deployment", window["deployment_ref"], "--since", window["since"]]
    flags += ["--until", window["until"], "--output", str(path), "--url", server.base_url]
    assert main(["audit", "export", *flags], {"ECP_TOKEN": token}) == 0
    assert capsys.readouterr().out.startswith(f"wrote {path}: ")
    return dict(json.loads(path.read_text()))


@pytest.mark.spec("C16 log-export", "C16 verify-bundle")
def test_a_deleted_run_is_named_by_the_window_s_export(
    postgres_url, migrated_template, capsys, tmp_path
):
    for server in served(postgres_url, migrated_template):
        since = datetime.now(UTC)
        kept, gone, last = (finished_run(server) for _ in range(3))
        window = {
            "deployment_ref": "pay",
            "since": since.isoformat(),
            "until": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
        }

        before = export(server, window, tmp_path / "export-1.json", capsys)
        assert before["runs"] == [kept, gone, last]
        assert verify(tmp_path / "before.json", capsys, before)["verified"]

        delete_run(server, gone)
        after = export(server, window, tmp_path / "export-2.json", capsys)
        assert after["runs"] == [kept, last]
        report = verify(tmp_path / "after.json", capsys, after)
        assert report["consistent"] and not report["complete"]
        assert "has no record: the database no longer holds it" in report["error"]
        missing = [leaf for leaf in before["leaves"] if leaf["record"]["run_id"] == gone]
        assert report["failed_leaf"] == missing[0]["leaf_index"]
        assert report["failed_audit_id"] == missing[0]["audit_id"]


def cosigned(server: Console, witness: NoteKey, size: int) -> str:
    """The checkpoint once it covers ``size`` leaves and carries the witness's cosignature."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = server.client.get("/v1/log/checkpoint", headers=server.headers()).text
        note = parse_note(text)
        if Checkpoint.parse(note.text).size >= size and note.verified_by(witness) is not None:
            return text
        time.sleep(0.05)
    raise AssertionError(f"no cosigned checkpoint of {size} leaves: {text}")


def signed_size(server: Console) -> Checkpoint:
    note = server.client.get("/v1/log/checkpoint", headers=server.headers()).text
    return Checkpoint.parse(parse_note(note).text)


def rebuild_log_without(server: Console, run_id: str) -> None:
    """The insider's second history: the run deleted, the tenant's log rebuilt from what is left."""
    delete_run(server, run_id)
    with psycopg.connect(server.database, autocommit=True) as conn, conn.transaction():
        for table in ("ecp_log_leaves", "ecp_log_tiles", "ecp_log_heads", "ecp_log_pending"):
            conn.execute(f"DELETE FROM {table} WHERE tenant_id = %s", (TENANT,))  # noqa: S608
        conn.execute(
            "INSERT INTO ecp_log_pending (tenant_id, audit_id, record_digest)"
            " SELECT tenant_id, audit_id, record_digest FROM ecp_audit_records"
            " WHERE tenant_id = %s ORDER BY created_at, run_id, attempt",
            (TENANT,),
        )


@pytest.mark.spec("C16 witness", "C16 verify-bundle")
def test_a_forked_log_is_refused_by_the_witness_and_by_verify_bundle(
    postgres_url, migrated_template, capsys, tmp_path
):
    for url, witness, _ in _witness(tmp_path, LOG_KEY.vkey()):
        for server in served(
            postgres_url, migrated_template, log_witnesses=((url, witness.vkey()),)
        ):
            runs = [finished_run(server) for _ in range(3)]
            first = cosigned(server, witness, 9)
            seen = Checkpoint.parse(parse_note(first).text)
            bundle = server.client.get(f"/runs/{runs[0]}/audit/bundle", headers=server.headers())
            pinned = ("--witness-key", witness.vkey())
            assert verify(tmp_path / "one.json", capsys, bundle.json(), *pinned)["verified"]

            rebuild_log_without(server, runs[1])
            # Written behind the server's back, the rebuilt queue is read by the log thread's
            # safety-net pass (30 s while the listener is connected, ADR 0099), not at once.
            deadline = time.monotonic() + 60
            while signed_size(server).size != seen.size - 3:
                assert time.monotonic() < deadline, "the rebuilt log was never signed"
                time.sleep(0.05)
            extra = finished_run(server)  # three records: the log is back at the size seen
            deadline = time.monotonic() + 30
            while signed_size(server).size < seen.size:
                assert time.monotonic() < deadline, "the log never reached the size seen"
                time.sleep(0.05)
            fork = signed_size(server)
            assert (fork.size, fork.origin) == (seen.size, seen.origin)
            assert fork.root != seen.root  # two checkpoints of one size: a fork

            refusals = 'ecp_witness_refusals_total{status="422"}'
            while refusals not in httpx.get(url + "/metrics").text:
                assert time.monotonic() < deadline, "the witness never refused the fork"
                time.sleep(0.05)
            counted = re.search(
                r'^ecp_log_witness_refusals_total\{witness="witness.test/w1"\} (\S+)$',
                server.client.get("/metrics").text,
                re.MULTILINE,
            )
            assert counted is not None and float(counted.group(1)) >= 1
            note = parse_note(
                server.client.get("/v1/log/checkpoint", headers=server.headers()).text
            )
            assert note.verified_by(witness) is None and note.verified_by(LOG_KEY) == 0

            forked = server.client.get(f"/runs/{extra}/audit/bundle", headers=server.headers())
            unpinned = verify(tmp_path / "fork.json", capsys, forked.json())
            assert unpinned["verified"]  # the log's own key alone cannot tell
            report = verify(tmp_path / "fork.json", capsys, forked.json(), *pinned)
            assert not report["verified"]
            assert f"not cosigned by the witness {witness.name}" in report["error"]
