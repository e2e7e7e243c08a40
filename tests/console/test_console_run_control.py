"""The run page's controls over HTTP on the memory store: Pause, Resume and Cancel for
``run_control`` with their CSRF tokens, and Verify for ``audit_read``."""

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.support.console import console_client, deployed, field, waiting_run
from tests.support.console_runs import ADMIN, approve, person, run_status

pytestmark = pytest.mark.integration

CONTROL = "C15 console-run-control"
VERIFY = "C15 console-verify"


@pytest.fixture
def client() -> Iterator[TestClient]:
    yield from console_client()


def _control_form(page: str, run_id: str, action: str) -> dict[str, str]:
    return {"csrf_token": field(page, "csrf_token", f"/console/runs/{run_id}/{action}")}


@pytest.mark.spec(CONTROL)
def test_pause_resume_and_cancel_with_a_reason_once_confirmed(client):
    deployed(client, ADMIN, "pay")
    run_id, approval_id = waiting_run(client, ADMIN, "pay")
    operator = person(client, "operator")
    page = operator.get(f"/console/runs/{run_id}").text
    answer = operator.post(f"/console/runs/{run_id}/pause", _control_form(page, run_id, "pause"))
    assert (answer.status_code, answer.headers["location"]) == (303, f"/console/runs/{run_id}")
    page = operator.get(f"/console/runs/{run_id}").text
    assert "paused by its run" in page and ">Resume</button>" in page
    assert run_status(client, run_id)["status"] == "waiting_approval"  # it keeps waiting
    answer = operator.post(
        f"/console/runs/{run_id}/unpause", _control_form(page, run_id, "unpause")
    )
    assert answer.status_code == 303
    page = operator.get(f"/console/runs/{run_id}").text
    assert ">Pause</button>" in page
    form = _control_form(page, run_id, "cancel")
    unconfirmed = operator.post(f"/console/runs/{run_id}/cancel", {**form, "reason": "dup"})
    assert unconfirmed.status_code == 422 and "confirm" in unconfirmed.text
    no_reason = operator.post(f"/console/runs/{run_id}/cancel", {**form, "confirm": "yes"})
    assert no_reason.status_code == 422
    assert run_status(client, run_id)["status"] == "waiting_approval"
    done = operator.post(
        f"/console/runs/{run_id}/cancel", {**form, "reason": "a duplicate", "confirm": "yes"}
    )
    assert done.status_code == 303
    assert run_status(client, run_id)["status"] == "canceled"
    page = operator.get(f"/console/runs/{run_id}").text
    assert "canceled" in page and "/cancel" not in page  # an ended run has no controls
    again = operator.post(
        f"/console/runs/{run_id}/pause", {**form, "reason": "late"}
    )  # a control of an ended run: the API's own answer
    assert again.status_code == 409
    assert client.get(f"/v1/approvals/{approval_id}", headers=ADMIN).json()["status"] == "withdrawn"


@pytest.mark.spec(CONTROL, "C15 console-csrf")
def test_a_control_post_without_its_token_or_from_a_reader_is_403_and_changes_nothing(client):
    deployed(client, ADMIN, "pay")
    run_id, _ = waiting_run(client, ADMIN, "pay")
    operator, other_operator = person(client, "operator"), person(client, "operator")
    viewer = person(client, "viewer")
    form = _control_form(operator.get(f"/console/runs/{run_id}").text, run_id, "cancel")
    cancel = {**form, "reason": "forged", "confirm": "yes"}
    for who, fields in (
        (operator, {"reason": "no token", "confirm": "yes"}),
        (other_operator, cancel),  # another session's token
        (viewer, cancel),
    ):
        for action in ("cancel", "pause", "unpause"):
            answer = who.post(f"/console/runs/{run_id}/{action}", fields)
            assert answer.status_code == 403, (action, answer.text)
    viewer_page = viewer.get(f"/console/runs/{run_id}").text
    assert "csrf_token" not in viewer_page.split("</header>")[1]  # no form besides sign-out
    assert run_status(client, run_id)["status"] == "waiting_approval"
    assert run_status(client, run_id)["status"] != "paused"


@pytest.mark.spec(VERIFY)
def test_verify_shows_the_chain_verified_with_its_key_and_count(client):
    deployed(client, ADMIN, "pay")
    run_id, approval_id = waiting_run(client, ADMIN, "pay")
    approve(client, "pay", approval_id)
    viewer = person(client, "viewer")
    assert f'action="/console/runs/{run_id}/verify"' in viewer.get(f"/console/runs/{run_id}").text
    page = viewer.get(f"/console/runs/{run_id}/verify")
    assert page.status_code == 200
    expected = client.get(f"/runs/{run_id}/audit/verify", headers=ADMIN).json()
    assert expected["verified"] and expected["signature_verified"]
    assert ">Verified</h2>" in page.text
    assert expected["signing_key_id"] in page.text
    assert f"<dd>{expected['record_count']}" in page.text
    refused = person(client, "analyst").get(f"/console/runs/{run_id}/verify")
    assert refused.status_code == 403
    assert person(client, "viewer").get("/console/runs/nope/verify").status_code == 404
