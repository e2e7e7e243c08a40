"""OpenTelemetry traces (the ``otel`` extra): request, dispatch attempt and audit append, exported.

A real OTLP/HTTP collector on 127.0.0.1 decodes what the exporter posts with the protobuf
classes the exporter itself depends on. The app runs its dispatch workers on a fresh database.
"""

import base64
import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from starlette.testclient import TestClient

from ecp_http.config.settings import Settings, SettingsError
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SECRET = "t" * 40
TENANT = "tenant-traced"
CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
GRAPH = {
    "graph_id": "stamp-and-end",
    "entry": "stamp",
    "nodes": [
        {
            "id": "stamp",
            "kind": "action",
            "action": {
                "name": "set",
                "fingerprint": "set/1",
                "arguments": {"values": {"stamped": "yes"}},
            },
        },
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "stamp", "target": "done"}],
}


def settings(database: str, **changes: Any) -> Settings:
    return Settings(
        database_url=database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(80, 112))).decode(),
        scheduler_enabled=False,
        dispatch_poll_seconds=0.02,
        **changes,
    )


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=TENANT, roles=['admin'])}"}


@attrs.define
class Exported:
    """One span as the collector got it, with its attributes as a plain dict."""

    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    links: list[tuple[str, str]]


@attrs.define
class Collector:
    """What the OTLP/HTTP collector received: decoded spans and the resources they came with."""

    url: str = ""
    spans: list[Exported] = attrs.field(factory=list)
    resources: list[dict[str, Any]] = attrs.field(factory=list)
    refused: list[str] = attrs.field(factory=list)

    def named(self, name: str) -> list[Exported]:
        return [span for span in self.spans if span.name == name]


def _values(pairs: Any) -> dict[str, Any]:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in pairs}


@contextmanager
def collector() -> Iterator[Collector]:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 for the duration of the block."""
    state = Collector()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if (
                self.path != "/v1/traces"
                or self.headers["Content-Type"] != "application/x-protobuf"
            ):
                state.refused.append(self.path)
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with lock:
                for resource_spans in request.resource_spans:
                    state.resources.append(_values(resource_spans.resource.attributes))
                    for scope_spans in resource_spans.scope_spans:
                        state.spans.extend(
                            Exported(
                                name=span.name,
                                kind=span.kind,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                attributes=_values(span.attributes),
                                links=[(ln.trace_id.hex(), ln.span_id.hex()) for ln in span.links],
                            )
                            for span in scope_spans.spans
                        )
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def deploy(client: TestClient) -> None:
    assert client.post("/v1/graphs", json=GRAPH, headers=auth()).status_code == 201
    deployment = {"deployment_ref": "stamps", "graph_id": "stamp-and-end"}
    assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201


def wait_for_status(client: TestClient, run_id: str, status: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while client.get(f"/runs/{run_id}", headers=auth()).json()["status"] != status:
        assert time.monotonic() < deadline, f"run {run_id} did not become {status}"
        time.sleep(0.02)


def test_a_request_is_traced_through_dispatch_to_the_audit_append(fresh_database):
    with collector() as otlp:
        traced = settings(fresh_database, otel_traces_endpoint=f"{otlp.url}/v1/traces")
        with TestClient(create_app(traced)) as client:
            deploy(client)
            started = client.post(
                "/runs",
                json={"deployment_ref": "stamps", "input": {}},
                headers={**auth(), "traceparent": f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"},
            )
            assert started.status_code == 201, started.text
            run_id = started.json()["run_id"]
            wait_for_status(client, run_id, "completed")
            assert client.get("/no/such/path").status_code == 404
        # The lifespan ended: the provider was shut down, so every span has been exported.

    assert otlp.refused == []
    assert {resource.get("service.name") for resource in otlp.resources} == {"ecp"}

    (request,) = otlp.named("POST /runs")
    assert request.kind == Span.SpanKind.SPAN_KIND_SERVER
    assert (request.trace_id, request.parent_span_id) == (CLIENT_TRACE, CLIENT_SPAN)
    assert request.attributes["http.route"] == "/runs"
    assert request.attributes["http.request.method"] == "POST"
    assert request.attributes["http.response.status_code"] == 201
    assert request.attributes["ecp.run_id"] == run_id
    assert request.attributes["ecp.request_id"] == started.headers["x-request-id"]

    attempts = [a for a in otlp.named("ecp.dispatch") if a.attributes["ecp.run_id"] == run_id]
    assert attempts
    for attempt in attempts:  # every attempt the request set going is in the client's trace
        assert (attempt.trace_id, attempt.parent_span_id) == (CLIENT_TRACE, request.span_id)
        assert attempt.attributes["ecp.tenant_id"] == TENANT
    assert attempts[-1].attributes["ecp.run.status"] == "completed"
    # One dispatch may make several attempts (ADR 0059): the stamp's append is a child of one.
    appends = [
        s
        for s in otlp.named("ecp.audit.append")
        if (s.attributes["ecp.run_id"], s.attributes["ecp.node_id"]) == (run_id, "stamp")
    ]
    assert len(appends) == 1
    (append,) = appends
    assert [a for a in attempts if a.span_id == append.parent_span_id]
    assert append.trace_id == CLIENT_TRACE
    assert (append.attributes["ecp.run_id"], append.attributes["ecp.node_id"]) == (run_id, "stamp")
    assert append.attributes["ecp.audit.attempt"] >= 1

    (unmatched,) = [s for s in otlp.spans if s.attributes.get("url.path") == "/no/such/path"]
    assert unmatched.name == "GET"
    assert "http.route" not in unmatched.attributes
    assert unmatched.attributes["http.response.status_code"] == 404


def test_a_run_no_request_of_this_process_touched_starts_its_own_trace(fresh_database):
    with collector() as otlp:
        untraced_start = settings(fresh_database)
        with TestClient(create_app(untraced_start, start_workers=False)) as client:
            deploy(client)
            started = client.post(
                "/runs", json={"deployment_ref": "stamps", "input": {}}, headers=auth()
            )
            run_id = started.json()["run_id"]
        # Another process (a restart) picks the run up with tracing on.
        traced = settings(fresh_database, otel_traces_endpoint=f"{otlp.url}/v1/traces")
        with TestClient(create_app(traced)) as client:
            wait_for_status(client, run_id, "completed")

    attempts = [a for a in otlp.named("ecp.dispatch") if a.attributes["ecp.run_id"] == run_id]
    assert attempts
    assert all(a.parent_span_id == "" for a in attempts)


# Settings ---------------------------------------------------------------------------------


def test_the_traces_endpoint_comes_from_the_standard_variables():
    read = Settings.from_mapping
    assert read({}).otel_traces_endpoint is None
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"}
    assert read(base).otel_traces_endpoint == "http://127.0.0.1:4318/v1/traces"
    both = {**base, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector.invalid/t"}
    assert read(both).otel_traces_endpoint == "https://collector.invalid/t"
    assert read({**both, "OTEL_SDK_DISABLED": "TRUE"}).otel_traces_endpoint is None
    assert read({**both, "OTEL_SDK_DISABLED": "false"}).otel_traces_endpoint is not None
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_ENDPOINT"):
        read({"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"})


@given(
    port=st.integers(1, 65535),
    path=st.lists(st.text("abcxyz-_", min_size=1, max_size=5), max_size=3).map("/".join),
    slash=st.booleans(),
)
def test_the_base_endpoint_gets_the_traces_path_once(port, path, slash):
    base = f"http://127.0.0.1:{port}" + (f"/{path}" if path else "") + ("/" if slash else "")
    found = Settings.from_mapping({"OTEL_EXPORTER_OTLP_ENDPOINT": base}).otel_traces_endpoint
    assert found == base.rstrip("/") + "/v1/traces"


# Off, or not installed --------------------------------------------------------------------


def _in_a_fresh_interpreter(code: str, database: str) -> dict[str, Any]:
    """Run ``code`` with ``DATABASE`` set; it prints one JSON object, returned parsed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["ECP_TEST_TRACING_DATABASE"] = database
    prelude = textwrap.dedent(f"""
        import base64, json, os, sys
        from starlette.testclient import TestClient
        from ecp_http.startup.app import create_app
        from ecp_http.config.settings import Settings
        DATABASE = os.environ["ECP_TEST_TRACING_DATABASE"]
        KEY = base64.b64encode(bytes(range(32))).decode()
        SECRET = {SECRET!r}
    """)
    out = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_without_an_endpoint_nothing_of_opentelemetry_is_loaded(fresh_database):
    result = _in_a_fresh_interpreter(
        """
        settings = Settings.from_mapping({
            "ECP_DATABASE_URL": DATABASE, "ECP_JWT_SECRET": SECRET, "ECP_AUDIT_SIGNING_KEY": KEY,
        })
        with TestClient(create_app(settings, start_workers=False)) as client:
            status = client.get("/health/live").status_code
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
        print(json.dumps({"status": status, "loaded": loaded}))
        """,
        fresh_database,
    )
    assert result == {"status": 200, "loaded": []}


def test_without_the_extra_an_endpoint_only_warns(fresh_database):
    result = _in_a_fresh_interpreter(
        """
        import importlib.abc, logging

        class NotInstalled(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "opentelemetry":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NotInstalled())
        warnings = []
        handler = logging.Handler()
        handler.emit = lambda record: warnings.append(record.getMessage())
        logging.getLogger("ecp_http").addHandler(handler)
        settings = Settings(
            database_url=DATABASE, jwt_secret=SECRET, audit_signing_key=KEY,
            otel_traces_endpoint="http://127.0.0.1:9/v1/traces",
        )
        app = create_app(settings, start_workers=False)
        with TestClient(app) as client:
            status = client.get("/health/live").status_code
        print(json.dumps({
            "status": status,
            "tracing": app.state.runtime.tracing is not None,
            "warnings": warnings,
        }))
        """,
        fresh_database,
    )
    assert (result["status"], result["tracing"]) == (200, False)
    assert any("ecp-http[otel] is not installed" in line for line in result["warnings"])
