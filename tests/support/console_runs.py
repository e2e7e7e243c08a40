"""The console's run pages in tests: a tenant's people, its runs, and what a page lists."""

import re

from starlette.testclient import TestClient
from tests.support.console import WAIT, Person, api_key, bearer, signed_in

TENANT = "console-runs"
ADMIN = bearer(TENANT, "admin")


def person(client: TestClient, role: str) -> Person:
    """A browser signed in with a new API key of TENANT with ``role``."""
    return signed_in(client, api_key(client, ADMIN, role)[0])


def listed(html: str) -> list[str]:
    """The run ids a page's run table links to, in order."""
    return re.findall(r'<a class="strong mono" href="/console/runs/([^"]+)"', html)


def approve(client: TestClient, ref: str, approval_id: str) -> None:
    """Approve over the API, waiting for the run to go on."""
    answer = client.post(
        f"/deployments/{ref}/approvals/{approval_id}/resolve",
        json={"decision": "approve"},
        headers={**ADMIN, **WAIT},
    )
    assert answer.status_code == 200, answer.text


def run_status(client: TestClient, run_id: str) -> dict:
    """The run as the API reads it."""
    return client.get(f"/runs/{run_id}", headers=ADMIN).json()


__all__ = ["ADMIN", "TENANT", "approve", "listed", "person", "run_status"]
