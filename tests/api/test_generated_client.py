"""A client generated from the served OpenAPI document runs the quickstart (ADR 0055).

``openapi-python-client`` generates a package from ``GET /openapi.json`` of the live server into
a temporary directory; the test imports it and registers a graph, deploys it, starts a run,
resolves its approval as an approver and reads the timeline, with the generated models and
methods only. An answer the document does not declare raises (``raise_on_unexpected_status``).
"""

import contextlib
import importlib
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

PACKAGE = "ecp_generated_client"  # not ecp_client: the real client library is installed
GENERATOR_CONFIG = {
    "package_name_override": PACKAGE,
    # The migration report is a PDF: the generator reads bytes only for octet-stream.
    "content_type_overrides": {"application/pdf": "application/octet-stream"},
    "post_hooks": [],  # no formatting of the generated code: it is imported, not read
}

pytestmark = [pytest.mark.e2e, pytest.mark.spec("C1 openapi-client")]


def _generate(document: dict, into: pathlib.Path) -> pathlib.Path:
    """Run ``openapi-python-client`` on ``document``; the directory the package lands in."""
    (into / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
    (into / "config.json").write_text(json.dumps(GENERATOR_CONFIG), encoding="utf-8")
    generator = pathlib.Path(sys.executable).parent / "openapi-python-client"
    done = subprocess.run(
        [
            str(generator),
            "generate",
            "--path",
            str(into / "openapi.json"),
            "--config",
            str(into / "config.json"),
            "--meta",
            "none",
            "--output-path",
            str(into / "src" / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Warning" not in output and "Error" not in output, output  # every piece generated
    return into / "src"


@pytest.fixture(scope="module")
def generated(ecp_server, tmp_path_factory) -> Iterator[ModuleType]:
    """The generated package, imported from its temporary directory; forgotten afterwards."""
    document = ecp_server.client.get("/openapi.json").json()
    source = _generate(document, tmp_path_factory.mktemp("client"))
    sys.path.insert(0, str(source))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(source))
        for name in [name for name in sys.modules if name.partition(".")[0] == PACKAGE]:
            del sys.modules[name]


@pytest.fixture
def clients(generated, ecp_server, tenant) -> Iterator[dict[str, Any]]:
    """Generated clients of the live server for this test's tenant: an admin and an approver."""
    with contextlib.ExitStack() as stack:
        yield {
            role: stack.enter_context(
                generated.AuthenticatedClient(
                    base_url=ecp_server.base_url,
                    token=ecp_server.token(tenant, role),
                    raise_on_unexpected_status=True,
                )
            )
            for role in ("admin", "approver")
        }


def _operation(name: str) -> ModuleType:
    """The generated module of one operation, such as ``runs.runs_start``."""
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def test_the_generated_client_runs_the_quickstart(clients):
    m = importlib.import_module(f"{PACKAGE}.models")
    admin, approver = clients["admin"], clients["approver"]

    definition = m.GraphDefinition(
        graph_id="refund-triage",
        entry="classify",
        nodes=[
            m.ActionNode(
                kind="action",
                id="classify",
                action=m.ActionDescriptorV1(
                    name="set",
                    fingerprint="set/1",
                    arguments=m.ActionDescriptorV1Arguments.from_dict(
                        {"values": {"category": "refund"}}
                    ),
                ),
            ),
            m.ApprovalNode(
                kind="approval",
                id="review",
                summary="Approve the refund",
                rationale="Refunds need a person",
            ),
            m.EndNode(kind="end", id="done"),
        ],
        edges=[
            m.EdgeDefinition(source="classify", target="review"),
            m.EdgeDefinition(source="review", target="done"),
        ],
    )
    registered = _operation("graphs.graphs_register").sync(client=admin, body=definition)
    assert isinstance(registered, m.GraphRegistration), registered
    assert (registered.graph_id, registered.version) == ("refund-triage", 1)

    deployment = _operation("graphs.graphs_create_deployment").sync(
        client=admin,
        body=m.CreateDeploymentRequest(deployment_ref="refunds", graph_id="refund-triage"),
    )
    assert isinstance(deployment, m.Deployment), deployment
    assert deployment.graph_version_ref == "refund-triage@1"

    run = _operation("runs.runs_start").sync(
        client=admin,
        body=m.StartRunRequest.from_dict(
            {"deployment_ref": "refunds", "input": {"order_id": "A-1001"}}
        ),
        prefer="wait=10",
    )
    assert isinstance(run, m.RunStatusResponse), run
    assert run.status == m.RunPublicStatus.WAITING_APPROVAL

    inbox = _operation("approvals.approvals_list").sync(
        client=approver, status=m.ApprovalStatus.PENDING, run_id=run.run_id
    )
    assert isinstance(inbox, m.ApprovalPageResponse), inbox
    [approval] = inbox.approvals
    resolved = _operation("approvals.approvals_resolve").sync(
        "refunds",
        approval.approval_id,
        client=approver,
        body=m.ApprovalResolutionRequest(decision=m.ApprovalDecision.APPROVE, reason="Fine"),
    )
    assert isinstance(resolved, m.ApprovalResolutionResponse), resolved
    assert resolved.run.status == m.RunPublicStatus.COMPLETED

    timeline = _operation("audit.audit_timeline").sync(run.run_id, client=admin)
    assert isinstance(timeline, m.AuditTimelineResponse), timeline
    nodes = list(dict.fromkeys(entry.node_id for entry in timeline.entries))
    assert nodes[:2] == ["classify", "review"]
    verified = _operation("audit.audit_verify_run").sync(run.run_id, client=admin)
    assert isinstance(verified, m.AuditVerificationResponse), verified
    assert verified.verified is True
    assert verified.record_count == len(timeline.entries)


def test_a_refusal_comes_back_as_the_documented_problem(clients):
    m = importlib.import_module(f"{PACKAGE}.models")
    answer = _operation("runs.runs_get").sync_detailed("no-such-run", client=clients["admin"])
    assert answer.status_code == 404
    assert isinstance(answer.parsed, m.Problem)
    assert answer.parsed.code == "not_found"
