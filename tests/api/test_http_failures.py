"""An unexpected failure answers 500 problem+json without a traceback (and is logged with one)."""

import base64

import psycopg
import pytest
from starlette.testclient import TestClient

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "f" * 40


@pytest.mark.spec("C1 problem-details")
def test_an_unexpected_failure_is_a_500_problem_without_a_traceback(fresh_database, caplog):
    # A database that is away is a 503 (test_database_outage.py); a table gone is unexpected.
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(32)).decode(),
    )
    token = mint_token(SECRET, tenant="t", roles=["admin"])
    with TestClient(
        create_app(settings, start_workers=False), raise_server_exceptions=False
    ) as client:
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            conn.execute("DROP TABLE ecp_runs CASCADE")
        response = client.get("/runs/some-run", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 500
        assert response.headers["content-type"] == "application/problem+json"
        body = response.json()
        assert body["code"] == "internal_error"
        assert set(body) == {"type", "title", "status", "detail", "code", "instance"}
        assert body["instance"] == f"urn:ecp:request:{response.headers['x-request-id']}"
        assert "Traceback" not in response.text
        assert "pool" not in response.text.lower()
        assert "unhandled error" in caplog.text


@pytest.mark.spec("§4.5 readiness", "C19 schema-newer")
def test_readiness_is_503_while_the_schema_is_pending_or_newer(fresh_database):
    from ecp_http.startup.database_setup import migrate
    from ecp_postgres import apply_migrations, rollback_migrations

    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(32)).decode(),
    )

    def schema(client: TestClient) -> tuple[int, str]:
        answer = client.get("/health/ready")
        assert answer.json()["status"] == ("ready" if answer.status_code == 200 else "degraded")
        return answer.status_code, answer.json()["checks"]["schema"]

    with TestClient(create_app(settings)) as client:
        assert client.get("/health/ready").status_code == 200
        rollback_migrations(fresh_database, 1)
        degraded = client.get("/health/ready")
        assert degraded.status_code == 503
        assert degraded.json() == {
            "status": "degraded",
            "checks": {"schema": "pending", "dispatcher": "running", "scheduler": "running"},
        }
        apply_migrations(fresh_database)
        assert schema(client) == (200, "current")
        # A newer release applied a migration this build does not know: replace this process.
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO _yoyo_migration (migration_hash, migration_id, applied_at_utc)"
                " VALUES ('f' || repeat('0', 63), 'core_9999_from_the_future', now())"
            )
        assert schema(client) == (503, "newer")
        listed = migrate({"ECP_DATABASE_URL": fresh_database}, "list")
        assert listed[-1].startswith("newer    core_9999_from_the_future  (applied by a newer")
        rollback_migrations(fresh_database, 1)  # newer wins over pending
        assert schema(client) == (503, "newer")
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            conn.execute("DELETE FROM _yoyo_migration WHERE migration_id LIKE 'core_9999%'")
        assert schema(client) == (503, "pending")


@pytest.mark.spec("§4.5 readiness")
def test_readiness_is_503_while_the_enabled_scheduler_task_is_stopped(fresh_database):
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(32)).decode(),
    )
    with TestClient(create_app(settings)) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 200
        assert ready.json()["checks"]["scheduler"] == "running"
        client.app.state.runtime.scheduler.stop()
        degraded = client.get("/health/ready")
        assert degraded.status_code == 503
        assert degraded.json()["checks"] == {
            "schema": "current",
            "dispatcher": "running",
            "scheduler": "stopped",
        }


@pytest.mark.spec("§4.5 readiness")
def test_a_disabled_scheduler_does_not_make_the_service_unready(fresh_database):
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=SECRET,
        scheduler_enabled=False,
        audit_signing_key=base64.b64encode(bytes(32)).decode(),
    )
    with TestClient(create_app(settings)) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 200
        assert ready.json()["checks"]["scheduler"] == "disabled"
