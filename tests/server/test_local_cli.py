"""``ecp token`` and ``ecp migrate list`` as real subprocesses beside the running e2e server.

``ecp token`` run in another directory signs with the secret of the server's data directory, so
the server accepts its tokens; ``ecp migrate list`` answers from the server's database while the
migration lock is held, without loading the application.
"""

import os
import pathlib
import subprocess
import sys

import psycopg
import pytest
from tests.support.e2e import check

from ecp_postgres.migrations import LOCK_KEY, migrations

pytestmark = pytest.mark.e2e

ECP = pathlib.Path(sys.executable).with_name("ecp")
COMMAND = [str(ECP)] if ECP.exists() else [sys.executable, "-m", "ecp_http.cli"]
SUBPROCESS_SECONDS = 60


def clean_environment(**env):
    """The environment without any ECP_* variable of ours, plus ``env``."""
    kept = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}
    return {**kept, **env}


@pytest.mark.spec("C2 dev-token-secret")
def test_a_token_minted_in_another_directory_is_accepted_by_the_server(
    tmp_path, ecp_server, tenant
):
    served = tmp_path / "served"  # the server's data directory, as `ecp serve` leaves it
    served.mkdir()
    secret = served / "jwt-secret"
    secret.write_text(ecp_server.jwt_secret + "\n", encoding="utf-8")
    secret.chmod(0o600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def token(*args, **env):
        return subprocess.run(
            [*COMMAND, "token", "--tenant", tenant, "--role", "admin", *args],
            cwd=elsewhere,
            env=clean_environment(**env),
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_SECONDS,
            check=False,
        )

    for minted in (token("--data-dir", served), token(ECP_DATA_DIR=str(served))):
        assert (minted.returncode, minted.stderr) == (0, "")
        headers = {"Authorization": f"Bearer {minted.stdout.strip()}"}
        check(ecp_server.client.get("/admin/runs", headers=headers), 200)

    refused = token()  # ./.ecp of the other directory holds no secret
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"ecp token: no development secret in {elsewhere / '.ecp'}; run `ecp serve` there "
        "first or set ECP_JWT_SECRET\n"
    )
    assert list(elsewhere.iterdir()) == []  # and it made none


LIST_AND_TELL = """
import sys
from ecp_http.cli import main
status = main(["migrate", "list"])
heavy = ("ecp_http.startup.bootstrap", "ecp_http.config.settings", "ecp_postgres.database", "starlette",
         "uvicorn", "httpx", "cel")
print(" ".join(name for name in heavy if name in sys.modules), file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.spec("C2 migrate-list-no-wait", "C2 cli")
def test_migrate_list_answers_while_the_migration_lock_is_held(e2e_database, ecp_server):
    every = [migration.id for migration in migrations()]
    with psycopg.connect(e2e_database, autocommit=True) as holder:
        # Another migrator holds the lock and has marked a migration it has not committed yet;
        # both stay so until the command has ended, past its subprocess timeout if it waited.
        holder.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        with holder.transaction():
            holder.execute("LOCK TABLE _yoyo_migration IN ROW EXCLUSIVE MODE")
            done = subprocess.run(
                [sys.executable, "-c", LIST_AND_TELL],
                env=clean_environment(ECP_DATABASE_URL=e2e_database),
                capture_output=True,
                text=True,
                timeout=SUBPROCESS_SECONDS,
                check=False,
            )
        holder.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
    assert (done.returncode, done.stderr) == (0, "\n")  # nothing of the application loaded
    assert done.stdout.splitlines() == [f"applied  {migration}" for migration in every]
