"""The model-migration result and its PDF over HTTP, for a backtest run against the loopback
stand-in provider: JSON that always abstains, a PDF whose first page renders to a PNG, 404s
for unknown, unfinished and other tenants' backtests, and the report_read permission."""

import base64
import io

import pypdfium2
import pytest
import stamina
from PIL import Image
from starlette.testclient import TestClient
from tests.support.backtests import KEY, request_body, world

from ecp_core.backtests.migration import MIGRATION_METHOD, MIGRATION_REPORT
from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "m" * 40
SEED = base64.b64encode(bytes(range(9, 41))).decode("ascii")
A4_POINTS = (595.28, 841.89)
A4_PIXELS = (596, 842)
"""An A4 page rendered at 72 dots per inch: its points, rounded up (as PDFium does)."""
GAPS = ["too_few_pairs_for_hoeffding99", "no_monthly_spread", "no_predictive_validation"]


@pytest.fixture(autouse=True)
def one_try_per_call():
    with stamina.set_testing(True, attempts=1):
        yield


@pytest.fixture
def armed():
    with world() as stand_in:
        yield stand_in


@pytest.fixture(params=["memory", "postgres"])
def store(request):
    """A memory store, or the URL of a fresh PostgreSQL database the app opens itself."""
    if request.param == "memory":
        return MemoryStore()
    return request.getfixturevalue("fresh_database")


def app_over(armed, store):
    on_postgres = isinstance(store, str)
    settings = Settings(
        database_url=store if on_postgres else None,
        jwt_secret=SECRET,
        audit_signing_key=SEED,
        model_catalog=dict(armed.setup().provider.catalog),
        backtest_digest_key=KEY,
        backtest_digest_key_id="current",
    )
    return create_app(settings, storage=None if on_postgres else store, start_workers=False)


def auth(role="analyst", tenant="acme"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


def finished_backtest(client, app, **changes) -> str:
    accepted = client.post("/v1/backtests", json=request_body(**changes), headers=auth())
    assert accepted.status_code == 202, accepted.text
    app.state.runtime.ecp.backtests.run_queued()
    return accepted.json()["backtest_id"]


def first_page(pdf: bytes) -> tuple[Image.Image, str, tuple[float, float]]:
    """Page 1 rendered to PNG (and read back), its text, and its size in points."""
    document = pypdfium2.PdfDocument(pdf)
    try:
        page = document[0]
        png = io.BytesIO()
        page.render(scale=1).to_pil().save(png, format="PNG")
        text = page.get_textpage().get_text_range()
        size = page.get_size()
    finally:
        document.close()
    return Image.open(io.BytesIO(png.getvalue())), text, size


@pytest.mark.spec("§9 method-versions", "§4.4 backtest-retains-no-raw-data")
def test_a_finished_backtest_has_an_abstaining_migration_result_and_its_pdf(armed, store):
    armed.answers["small"] = {"q0": "wrong"}  # the candidate misses case 0
    app = app_over(armed, store)
    with TestClient(app) as client:
        backtest_id = finished_backtest(client, app)
        calls = armed.standin.calls()
        answer = client.get(f"/v1/backtests/{backtest_id}/migration", headers=auth())
        report = client.get(f"/v1/backtests/{backtest_id}/migration.pdf", headers=auth())
        again = client.get(f"/v1/backtests/{backtest_id}/migration.pdf", headers=auth("approver"))
    assert armed.standin.calls() == calls  # a read calls no provider
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["method_version"], body["report_format"]) == (MIGRATION_METHOD, MIGRATION_REPORT)
    assert (body["experimental"], body["verdict"]) == (True, "abstain")
    assert [gap["code"] for gap in body["evidence_gaps"]] == GAPS
    observed = body["observed"]
    assert (observed["paired_cases"], observed["unpaired_cases"]) == (5, 0)
    assert (observed["incumbent_success_rate"], observed["candidate_success_rate"]) == (1.0, 0.8)
    interval = observed["difference_interval"]
    assert interval["lower"] <= observed["success_rate_difference"] <= interval["upper"]
    assert observed["mean_cost_difference_usd"].startswith("-")  # the candidate is cheaper
    assert (body["incumbent"]["model_ref"], body["candidate"]["model_ref"]) == ("big", "small")

    assert report.status_code == 200, report.text
    assert report.headers["content-type"] == "application/pdf"
    assert report.headers["content-disposition"] == (
        f'attachment; filename="{MIGRATION_REPORT}-{backtest_id}.pdf"'
    )
    assert report.content.startswith(b"%PDF-")
    assert again.content == report.content  # dated by the backtest, so the same bytes
    image, text, size = first_page(report.content)
    assert image.format == "PNG"
    assert image.size == A4_PIXELS
    assert size == pytest.approx(A4_POINTS, abs=0.01)
    darkest, lightest = image.convert("L").getextrema()
    assert lightest == 255  # a white page ...
    assert darkest < 64  # ... with dark text on it
    for printed in (MIGRATION_REPORT, MIGRATION_METHOD, "abstain", backtest_id, *GAPS):
        assert printed in text
    for raw in ("Answer with the code", "wrong", "q3", '"verdict"'):  # no case text
        assert raw not in text


def test_unknown_unfinished_and_other_tenants_backtests_have_no_migration_result(armed):
    app = app_over(armed, MemoryStore())
    with TestClient(app) as client:
        done = finished_backtest(client, app)
        queued = client.post("/v1/backtests", json=request_body(6), headers=auth())
        assert queued.status_code == 202
        waiting = queued.json()["backtest_id"]
        for suffix in ("migration", "migration.pdf"):
            for backtest_id, headers in (
                ("nope", auth()),
                (waiting, auth()),
                (done, auth(tenant="other")),
            ):
                answer = client.get(f"/v1/backtests/{backtest_id}/{suffix}", headers=headers)
                assert answer.status_code == 404, (backtest_id, suffix, answer.text)
                assert answer.json()["code"] == "not_found"
            assert client.get(f"/v1/backtests/{done}/{suffix}", headers=auth()).status_code == 200


@pytest.mark.parametrize(("role", "status"), [("viewer", 403), ("operator", 403), ("admin", 200)])
def test_the_migration_result_needs_the_report_read_permission(armed, role, status):
    app = app_over(armed, MemoryStore())
    with TestClient(app) as client:
        done = finished_backtest(client, app)
        for suffix in ("migration", "migration.pdf"):
            answer = client.get(f"/v1/backtests/{done}/{suffix}", headers=auth(role))
            assert answer.status_code == status, answer.text
        assert client.get(f"/v1/backtests/{done}/migration").status_code == 401
