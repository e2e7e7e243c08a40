"""``ecp bills`` as a real subprocess against the running e2e server.

The command line talks only to the HTTP API (``ECP_URL``, ``ECP_TOKEN``): statements and cost API
pages are imported from files, reports read as JSON and Markdown, and every refusal (the
service's, a missing token, a server that is not there) ends with exit status 1 and a message
on stderr that says what happened.
"""

import json
import os
import pathlib
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from tests.support.e2e import check

pytestmark = [pytest.mark.e2e, pytest.mark.spec("§4.3 bills-cli")]

METHOD = "measured-cost-proportional/1"
ECP = pathlib.Path(sys.executable).with_name("ecp")
COMMAND = [str(ECP)] if ECP.exists() else [sys.executable, "-m", "ecp_http.cli"]
DAY1 = datetime(2026, 11, 1, tzinfo=UTC)
DAY2 = DAY1 + timedelta(days=1)
DAY3 = DAY2 + timedelta(days=1)


def bills(*args, env):
    """Run ``ecp bills ARGS`` with exactly the ECP_* variables in ``env``."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}
    return subprocess.run(
        [*COMMAND, "bills", *map(str, args)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def env(ecp_server, tenant):
    """The command line's environment for an admin of this test's tenant."""
    return {"ECP_URL": ecp_server.base_url, "ECP_TOKEN": ecp_server.token(tenant, "admin")}


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def statement(statement_id="openai-2026-11", total="3.00", buckets=None):
    buckets = buckets or [
        {
            "bucket_id": "day1/proj_a",
            "period_start": iso(DAY1),
            "period_end": iso(DAY2),
            "amount_usd": "2.00",
            "provider_dimensions": {"project_id": "proj_a"},
        },
        {
            "bucket_id": "day1/proj_b",
            "period_start": iso(DAY1),
            "period_end": iso(DAY2),
            "amount_usd": "1.00",
            "provider_dimensions": {"project_id": "proj_b"},
        },
    ]
    return {
        "statement_id": statement_id,
        "provider": "openai",
        "period_start": iso(DAY1),
        "period_end": iso(DAY3),
        "currency": "USD",
        "billed_total_usd": total,
        "source_kind": "manual",
        "buckets": buckets,
    }


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def cost_page():
    """One complete cost API page: day 1 has two line items of proj_a and one of proj_b."""

    def result(value, project, line_item="gpt-x, input"):
        return {
            "object": "organization.costs.result",
            "amount": {"value": value, "currency": "usd"},
            "line_item": line_item,
            "project_id": project,
        }

    def day(start, *results):
        return {
            "object": "bucket",
            "start_time": int(start.timestamp()),
            "end_time": int((start + timedelta(days=1)).timestamp()),
            "results": list(results),
        }

    page = {
        "object": "page",
        "has_more": False,
        "next_page": None,
        "data": [
            day(
                DAY1,
                result(1.25, "proj_a"),
                result(0.75, "proj_a", "gpt-x, output"),
                result(0.5, "proj_b"),
            ),
            day(DAY2, result(3, "proj_a")),
        ],
    }
    # Amounts are read exactly from the text: 0.1 + 0.2 is 0.3 here, never 0.30000000000000004.
    page["data"][1]["results"].append(result(0.1, "proj_b"))
    page["data"][1]["results"].append(result(0.2, "proj_b"))
    return page


def load_evidence(caller):
    """Measured openai charges: proj_a day 1 (r1, success), proj_b day 1 (r2, failure), proj_a day 2."""

    def charge(event_id, cost, at, project, run_id):
        return {
            "event_id": event_id,
            "workflow_id": "support",
            "workflow_version": "v1",
            "run_id": run_id,
            "occurred_at": iso(at),
            "charge_id": f"c-{event_id}",
            "cost_usd": cost,
            "cost_measurement": "measured",
            "metadata": {"provider": "openai", "project_id": project},
        }

    events = [
        charge("e1", "1.00", DAY1 + timedelta(hours=9), "proj_a", "r1"),
        charge("e2", "0.50", DAY1 + timedelta(hours=10), "proj_b", "r2"),
        charge("e3", "2.50", DAY2 + timedelta(hours=9), "proj_a", "r3"),
        charge("e4", "0.25", DAY2 + timedelta(hours=10), "proj_b", "r3"),
    ]
    assert (
        check(caller.post("/v1/evidence/executions", json={"events": events}), 200)["stored"] == 4
    )
    outcomes = [
        {
            "event_id": f"o-{run_id}",
            "workflow_id": "support",
            "workflow_version": "v1",
            "run_id": run_id,
            "outcome_type": "done",
            "value": value,
            "asserted_at": iso(DAY3),
        }
        for run_id, value in (("r1", True), ("r2", False), ("r3", True))
    ]
    assert (
        check(caller.post("/v1/evidence/outcomes", json={"events": outcomes}), 200)["stored"] == 3
    )
    definition = {
        "workflow_id": "support",
        "workflow_version": "v1",
        "outcome_type": "done",
        "predicate": {"kind": "equals", "value": True},
    }
    check(caller.post("/v1/debugger/outcome-definitions", json=definition), 201)


@pytest.mark.spec("§4.3 bill-import-replay")
def test_import_a_statement_then_an_identical_one_then_changed_content(tmp_path, env):
    path = write(tmp_path, "statement.json", statement())
    first = bills("import", path, env=env)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout.startswith(
        "imported: openai statement openai-2026-11, 2 buckets, 3.00 USD, sha256:"
    )
    digest = first.stdout.split()[-1]
    again = bills("import", path, env=env)
    assert again.returncode == 0
    assert (
        again.stdout
        == f"already imported (identical): openai statement openai-2026-11, 2 buckets, 3.00 USD, {digest}\n"
    )
    changed = statement()
    changed["buckets"][0]["amount_usd"], changed["buckets"][1]["amount_usd"] = "1.50", "1.50"
    refused = bills("import", write(tmp_path, "changed.json", changed), env=env)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr.startswith("ecp bills: HTTP 409 conflict:")
    assert "immutable" in refused.stderr
    # Nothing changed: the stored statement is still the first.
    assert bills("import", path, env=env).stdout.startswith("already imported (identical)")


def test_a_refused_statement_prints_each_failing_field(tmp_path, env):
    broken = statement(
        total="9.99",
        buckets=[
            {
                "bucket_id": "b0",
                "period_start": iso(DAY1 - timedelta(hours=1)),
                "period_end": iso(DAY2),
                "amount_usd": "1.00",
            },
            {
                "bucket_id": "b0",
                "period_start": iso(DAY2),
                "period_end": iso(DAY3),
                "amount_usd": "2.00",
                "provider_dimensions": {"project_id": "proj_a"},
            },
        ],
    )
    refused = bills("import", write(tmp_path, "broken.json", broken), env=env)
    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert lines[0].startswith("ecp bills: HTTP 422 validation_failed:")
    assert sorted(lines[1:]) == [
        "  billed_total_usd: must equal the sum of bucket amounts exactly (3.00)",
        "  buckets.0.period_start: must not precede the statement period",
        "  buckets.1.bucket_id: must be unique",
    ]
    # A schema refusal names its field the same way.
    euro = bills(
        "import", write(tmp_path, "euro.json", {**statement(), "currency": "EUR"}), env=env
    )
    assert euro.returncode == 1
    assert euro.stderr.splitlines()[1].startswith("  currency: ")


@pytest.mark.spec("§9.1 cost-page-normalizer")
def test_a_cost_page_is_normalized_offline(tmp_path):
    page = write(tmp_path, "page.json", cost_page())
    # Offline: no token and no server are needed.
    answer = bills(
        "normalize", page, "--statement-id", "openai-2026-11", env={"ECP_URL": "http://127.0.0.1:9"}
    )
    assert (answer.returncode, answer.stderr) == (0, "")
    normalized = json.loads(answer.stdout)
    assert {
        key: normalized[key]
        for key in (
            "statement_id",
            "provider",
            "currency",
            "source_kind",
            "billed_total_usd",
            "period_start",
            "period_end",
        )
    } == {
        "statement_id": "openai-2026-11",
        "provider": "openai",
        "currency": "USD",
        "source_kind": "cost_api",
        "billed_total_usd": "5.80",
        "period_start": "2026-11-01T00:00:00.000000Z",
        "period_end": "2026-11-03T00:00:00.000000Z",
    }
    assert sorted(
        (b["period_start"][:10], b["provider_dimensions"]["project_id"], b["amount_usd"])
        for b in normalized["buckets"]
    ) == [
        ("2026-11-01", "proj_a", "2.00"),
        ("2026-11-01", "proj_b", "0.5"),
        ("2026-11-02", "proj_a", "3"),
        ("2026-11-02", "proj_b", "0.3"),
    ]
    default_id = json.loads(bills("normalize", page, env={}).stdout)["statement_id"]
    assert default_id == "openai-20261101-20261103"
    # A page that says more pages exist is refused, naming why.
    partial = write(tmp_path, "partial.json", {**cost_page(), "has_more": True})
    refused = bills("normalize", partial, env={})
    assert refused.returncode == 1
    assert "has_more: the page says more pages exist" in refused.stderr
    statement_file = bills("normalize", write(tmp_path, "statement.json", statement()), env={})
    assert statement_file.returncode == 1
    assert "is not a cost API page" in statement_file.stderr


def test_a_cost_page_is_imported_and_reported_as_json_and_markdown(tmp_path, env, admin):
    load_evidence(admin)
    page = write(tmp_path, "page.json", cost_page())
    imported = bills("import", page, "--statement-id", "openai-2026-11", env=env)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(
        "imported: openai statement openai-2026-11, 4 buckets, 5.80 USD, sha256:"
    )
    assert bills("import", page, "--statement-id", "openai-2026-11", env=env).stdout.startswith(
        "already imported (identical)"
    )

    as_json = bills("report", "openai", "openai-2026-11", "--format", "json", env=env)
    assert (as_json.returncode, as_json.stderr) == (0, "")
    report = json.loads(as_json.stdout)
    assert (report["method_version"], report["closure_state"]) == (
        METHOD,
        "allocated_with_variance",
    )
    assert report["totals"] == {
        "billed_total_usd": "5.80",
        "allocated_billed_usd": "5.80",
        "unreconciled_billed_usd": "0.00",
        "telemetry_measured_usd": "4.25",
        "telemetry_variance_usd": "1.55",
        "unbilled_telemetry_usd": "0",
        "outcome_unresolved_usd": "0",
    }
    billed = {
        (a["provider_dimensions"]["project_id"], a["period_start"][:10]): [
            (g["outcome_status"], g["billed_usd"]) for g in a["groups"]
        ]
        for a in report["allocations"]
    }
    assert billed == {
        ("proj_a", "2026-11-01"): [("success", "2.00")],
        ("proj_b", "2026-11-01"): [("failure", "0.5")],
        ("proj_a", "2026-11-02"): [("success", "3")],
        ("proj_b", "2026-11-02"): [("success", "0.3")],
    }
    default = bills("report", "openai", "openai-2026-11", env=env)  # JSON unless told otherwise
    assert {**json.loads(default.stdout), "as_of": None} == {**report, "as_of": None}

    markdown = bills("report", "openai", "openai-2026-11", "--format", "markdown", env=env)
    assert (markdown.returncode, markdown.stderr) == (0, "")
    assert markdown.stdout.startswith("# Reconciliation: openai statement openai-2026-11")
    assert f"- method_version: `{METHOD}`" in markdown.stdout
    assert "- closure state: **allocated_with_variance**" in markdown.stdout
    assert "| telemetry_variance_usd | 1.55 |" in markdown.stdout


@pytest.mark.spec("§5 role-rules")
def test_reading_reports_needs_a_reading_role_and_a_known_statement(
    tmp_path, env, ecp_server, tenant
):
    assert bills("import", write(tmp_path, "statement.json", statement()), env=env).returncode == 0
    analyst = {**env, "ECP_TOKEN": ecp_server.token(tenant, "analyst")}
    assert bills("report", "openai", "openai-2026-11", env=analyst).returncode == 0
    refused = bills("import", write(tmp_path, "other.json", statement("other")), env=analyst)
    assert refused.returncode == 1
    assert refused.stderr.startswith("ecp bills: HTTP 403 forbidden:")
    viewer = {**env, "ECP_TOKEN": ecp_server.token(tenant, "viewer")}
    assert bills("report", "openai", "openai-2026-11", env=viewer).stderr.startswith(
        "ecp bills: HTTP 403 forbidden:"
    )
    unknown = bills("report", "openai", "nothing", env=env)
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("ecp bills: HTTP 404 not_found:")
    # Another tenant's admin does not see this tenant's statement.
    stranger = {**env, "ECP_TOKEN": ecp_server.token(f"{tenant}-other", "admin")}
    assert bills("report", "openai", "openai-2026-11", env=stranger).stderr.startswith(
        "ecp bills: HTTP 404 not_found:"
    )


@pytest.mark.parametrize(
    "action", [["import", "statement.json"], ["report", "openai", "openai-2026-11"]]
)
@pytest.mark.spec("C2 cli-errors")
def test_a_missing_token_is_a_clear_refusal(tmp_path, ecp_server, action):
    write(tmp_path, "statement.json", statement())
    args = [str(tmp_path / part) if part.endswith(".json") else part for part in action]
    for token in ({}, {"ECP_TOKEN": "   "}):
        refused = bills(*args, env={"ECP_URL": ecp_server.base_url, **token})
        assert refused.returncode == 2  # it cannot run as given (ADR 0053)
        assert refused.stdout == ""
        assert refused.stderr == (
            "ecp bills: no credentials: set ECP_TOKEN (a bearer token) or ECP_API_KEY (a project "
            "API key); an admin's to import, an analyst's to read\n"
        )


def test_a_server_that_is_not_there(tmp_path, env):
    # A port that is bound but not listening: connecting to it is refused at once.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}"
        path = write(tmp_path, "statement.json", statement())
        for args in (["import", path], ["report", "openai", "openai-2026-11"]):
            refused = bills(*args, env={**env, "ECP_URL": url})
            assert refused.returncode == 1, args
            assert refused.stdout == ""
            assert refused.stderr.startswith(f"ecp bills: cannot reach the service at {url}")
            assert "is it running?" in refused.stderr
            assert "Traceback" not in refused.stderr


def test_a_file_that_cannot_be_read_or_parsed(tmp_path, env):
    missing = bills("import", tmp_path / "missing.json", env=env)
    assert (missing.returncode, missing.stderr) == (
        1,
        f"ecp bills: cannot read {tmp_path / 'missing.json'}: No such file or directory\n",
    )
    garbage = bills("import", write(tmp_path, "garbage.json", "{not json"), env=env)
    assert (garbage.returncode, garbage.stderr) == (
        1,
        f"ecp bills: {tmp_path / 'garbage.json'} is not JSON\n",
    )
