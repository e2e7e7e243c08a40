"""The wire boundary over HTTP: whatever a client sends is refused with a 4xx problem and writes
nothing, or is accepted and can then be stored, read back, canonicalised and verified.

The ASGI app runs on a fresh PostgreSQL; workers are off, so the test drives runs itself through
the same run service the dispatcher uses.
"""

import base64
import json
import secrets
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.support.json_values import depth_of

from ecp_core.canonical import MAX_SAFE_INTEGER, canonical_json
from ecp_core.json_text import MAX_DEPTH
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

JWT_SECRET = "w" * 32
TENANT = "wire"
COPY_GRAPH = {
    "graph_id": "copy",
    "entry": "copy",
    "nodes": [
        {
            "id": "copy",
            "kind": "mapping",
            "operations": [{"operation": "copy", "source_path": "v", "target_path": "copied"}],
        },
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "copy", "target": "done"}],
}


@pytest.fixture(scope="module")
def client(postgres_url, migrated_template) -> Iterator[TestClient]:
    from ecp_postgres import create_database, drop_database

    name = f"ecp_wire_{secrets.token_hex(4)}"
    url = create_database(postgres_url, name, template=migrated_template)
    settings = Settings(
        database_url=url,
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        max_body_bytes=64 * 1024,
    )
    with TestClient(create_app(settings, start_workers=False)) as test_client:
        test_client.headers.update(auth())
        created = test_client.post("/v1/graphs", json=COPY_GRAPH)
        assert created.status_code in (200, 201), created.text
        deployed = test_client.post(
            "/v1/deployments", json={"deployment_ref": "copy", "graph_id": "copy"}
        )
        assert deployed.status_code in (200, 201), deployed.text
        yield test_client
    drop_database(postgres_url, name)


def auth(tenant=TENANT, role="admin"):
    token = mint_token(JWT_SECRET, tenant=tenant, roles=[role], ttl_seconds=3600)
    return {"Authorization": f"Bearer {token}"}


def problem(response, status, code):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == code, body
    return body


def run_count(client):
    return client.get("/admin/runs").json()["total"]


JSON = {"Content-Type": "application/json"}


# -- a generated JSON text and the verdict an independent model expects --------------------------

leaf_texts = st.one_of(
    st.integers(-(2**60), 2**60).map(lambda n: (str(n), n, abs(n) <= MAX_SAFE_INTEGER)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: (json.dumps(x), x, True)),
    st.sampled_from([1e16, 1e21, -1e22, 1.7976931348623157e308, 5e-324, -0.0, 1e-7]).flatmap(
        lambda x: st.sampled_from(
            [(json.dumps(x), x, True), (f"{x:.16E}", float(f"{x:.16E}"), True)]
        )
    ),
    st.sampled_from([("NaN", None, False), ("-Infinity", None, False), ("1e400", None, False)]),
    st.text(max_size=8).map(
        lambda s: (
            json.dumps(s),
            s,
            "\x00" not in s and not any("\ud800" <= c <= "\udfff" for c in s),
        )
    ),
    st.sampled_from(
        [("true", True, True), ("null", None, True), ('"\\ud83d\\ude00"', "\U0001f600", True)]
    ),
)


def _combine(children):
    return st.one_of(
        st.lists(children, max_size=3).map(
            lambda items: (
                "[" + ",".join(t for t, _, _ in items) + "]",
                [v for _, v, _ in items],
                all(ok for _, _, ok in items),
            )
        ),
        st.lists(
            st.tuples(st.sampled_from(["a", "b", "\ud800", "c\x00", "é"]), children), max_size=3
        ).map(
            lambda members: (
                "{" + ",".join(f"{json.dumps(k)}:{t}" for k, (t, _, _) in members) + "}",
                {k: v for k, (_, v, _) in members},
                all(ok for _, (_, _, ok) in members)
                and len({k for k, _ in members}) == len(members)
                and all(k in ("a", "b", "é") for k, _ in members),
            )
        ),
    )


def _wrap(item, times):
    text, value, ok = item
    for _ in range(times):
        text, value = f"[{text}]", [value]
    return text, value, ok, times


values = st.tuples(st.recursive(leaf_texts, _combine, max_leaves=8), st.integers(0, 70)).map(
    lambda pair: _wrap(*pair)
)


@pytest.mark.spec("C7 i-json")
@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values)
def test_the_boundary_refuses_cleanly_or_everything_after_it_holds(client, generated):
    text, value, ok, _ = generated
    body = '{"deployment_ref": "copy", "input": {"v": ' + text + "}}"
    # The body nests two levels around the value: {"input": {"v": value}}.
    ok = ok and depth_of(value) + 2 <= MAX_DEPTH
    before = run_count(client)
    response = client.post("/runs", content=body.encode("utf-8", "surrogatepass"), headers=JSON)
    if not ok:
        assert 400 <= response.status_code < 500, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert run_count(client) == before
        return
    assert response.status_code == 201, response.text
    run_id = response.json()["run_id"]
    runtime = client.app.state.runtime
    assert runtime.ecp.runs.drive(TENANT, run_id).status.value == "COMPLETED"
    read = client.get(f"/runs/{run_id}")
    assert read.status_code == 200, read.text
    output = read.json()["output"]
    assert output["v"] == value and output["copied"] == value
    [record] = [
        entry
        for entry in client.get(f"/runs/{run_id}/timeline").json()["entries"]
        if entry["node_id"] == "copy"
    ]
    assert record["output_snapshot"] == {"copied": value}
    canonical_json(output)  # what was stored canonicalises
    verified = client.get(f"/runs/{run_id}/audit/verify").json()
    assert verified["verified"] is True and verified["signature_verified"] is True


@pytest.mark.spec("C7 numbers-as-accepted")
def test_large_floats_come_back_as_they_were_accepted_through_jsonb(client):
    text = '{"deployment_ref": "copy", "input": {"v": [1e16, 1e21, 12345678901234567e10, 0.1]}}'
    run_id = client.post("/runs", content=text, headers=JSON).json()["run_id"]
    client.app.state.runtime.ecp.runs.drive(TENANT, run_id)
    output = client.get(f"/runs/{run_id}").json()["output"]
    assert output["v"] == [1e16, 1e21, 1.2345678901234567e26, 0.1]
    assert all(isinstance(number, float) for number in output["v"])
    timeline = client.get(f"/runs/{run_id}/timeline").json()["entries"]
    assert timeline[0]["output_snapshot"] == {"copied": output["v"]}


# -- bodies: size, media type, encoding ----------------------------------------------------------


@pytest.mark.spec("C7 body-caps")
def test_a_body_over_the_cap_is_413_and_nothing_is_written(client):
    before = run_count(client)
    padding = "x" * (64 * 1024)
    body = json.dumps({"deployment_ref": "copy", "input": {"v": padding}})
    problem(client.post("/runs", content=body, headers=JSON), 413, "payload_too_large")

    def chunks():  # no Content-Length: the cap is enforced while streaming
        yield b'{"deployment_ref": "copy", "input": {"v": "'
        for _ in range(100):
            yield b"y" * 4096
        yield b'"}}'

    problem(client.post("/runs", content=chunks(), headers=JSON), 413, "payload_too_large")
    assert run_count(client) == before


@pytest.mark.spec("C7 body-caps")
def test_a_body_just_under_the_cap_is_accepted(client):
    head = b'{"deployment_ref": "copy", "input": {"v": "'
    tail = b'"}}'
    body = head + b"z" * (64 * 1024 - len(head) - len(tail)) + tail
    assert client.post("/runs", content=body, headers=JSON).status_code == 201


@pytest.mark.spec("C7 media-type")
@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", None],
)
def test_bodies_must_be_json_in_utf8(client, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    body = json.dumps({"deployment_ref": "copy", "input": {}}).encode("utf-8")
    before = run_count(client)
    problem(client.post("/runs", content=body, headers=headers), 415, "unsupported_media_type")
    assert run_count(client) == before


@pytest.mark.spec("C7 media-type")
def test_utf16_text_and_charset_spellings(client):
    body = json.dumps({"deployment_ref": "copy", "input": {}})
    problem(
        client.post("/runs", content=body.encode("utf-16"), headers=JSON), 400, "malformed_json"
    )
    for spelling in ("application/json; charset=UTF-8", 'Application/JSON;charset="utf-8"'):
        assert (
            client.post("/runs", content=body, headers={"Content-Type": spelling}).status_code
            == 201
        )


@pytest.mark.spec("C1 status-codes")
def test_401_and_403_come_before_size_and_media_type(client):
    big = b"{" + b" " * (128 * 1024) + b"}"
    unauthenticated = client.post("/runs", content=big, headers={"Authorization": "", **JSON})
    problem(unauthenticated, 401, "unauthenticated")
    viewer = {**auth(role="viewer"), "Content-Type": "text/plain"}
    problem(client.post("/v1/api-keys", content=b"x", headers=viewer), 403, "forbidden")


@pytest.mark.spec("C7 i-json")
def test_hostile_json_everywhere_a_body_is_read(client):
    deep = "[" * 10_000 + "]" * 10_000
    for method, path, text in [
        ("POST", "/runs", '{"deployment_ref": "copy", "input": {"\\ud800": 1}}'),
        ("POST", "/runs", '{"deployment_ref": "copy", "deployment_ref": "x", "input": {}}'),
        ("POST", "/runs", '{"deployment_ref": "copy", "input": {"v": ' + deep + "}}"),
        ("PUT", "/v1/retention/policy", '{"audit_ttl_seconds": ' + deep + "}"),
        ("POST", "/v1/graphs", deep),
    ]:
        found = problem(
            client.request(method, path, content=text, headers=JSON), 422, "invalid_json_value"
        )
        assert found["errors"], found


@pytest.mark.spec("C7 i-json")
def test_a_lone_surrogate_key_is_reported_with_its_location(client):
    text = '{"deployment_ref": "copy", "input": {"ok": {"\\udc01": true}}}'
    found = problem(client.post("/runs", content=text, headers=JSON), 422, "invalid_json_value")
    assert found["errors"] == [
        {
            "loc": ["input", "ok", "\udc01"],
            "msg": "member names must not contain U+0000 or unpaired surrogates",
        }
    ]


# -- query parameters ---------------------------------------------------------------------------


@pytest.mark.spec("C7 query-parameters")
@pytest.mark.parametrize(
    "raw", ["%C2%B2", "%E2%91%A0", "%EF%BC%95", "-1", "0", "501", "1" * 5000, "+5", " 5"]
)
def test_integer_parameters_take_ascii_digits_in_range_only(client, raw):
    problem(client.get(f"/admin/runs?limit={raw}"), 422, "validation_failed")
    if raw != "501":  # a version number, just not one that exists
        problem(client.get(f"/v1/graphs/copy?version={raw}"), 422, "validation_failed")


@pytest.mark.spec("C7 query-parameters")
def test_unknown_and_repeated_query_parameters_are_refused(client):
    found = problem(client.get("/admin/runs?limit=5&colour=red&size=2"), 422, "unknown_parameter")
    assert [e["loc"] for e in found["errors"]] == [["query", "colour"], ["query", "size"]]
    found = problem(client.get("/admin/runs?limit=5&limit=6"), 422, "validation_failed")
    assert found["errors"] == [{"loc": ["query", "limit"], "msg": "given more than once"}]
    assert client.get("/admin/runs?limit=5").status_code == 200


# -- methods -------------------------------------------------------------------------------------


def test_405_names_every_method_of_the_path(client):
    response = client.request("OPTIONS", "/v1/decision-schedules")
    problem(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    response = client.request("DELETE", "/runs")
    assert "POST" in response.headers["allow"]


@pytest.mark.spec("C7 query-parameters")
def test_declared_text_parameters_may_not_be_empty(client):
    found = problem(client.get("/v1/decisions?workflow_id="), 422, "validation_failed")
    assert found["errors"] == [{"loc": ["query", "workflow_id"], "msg": "must not be empty"}]
    assert client.get("/v1/decisions?workflow_id=w").status_code == 200


# -- Idempotency-Key and Link ---------------------------------------------------------------------


@pytest.mark.spec("C7 idempotency-key-header")
def test_the_idempotency_key_header_means_the_body_field(client):
    body = {"deployment_ref": "copy", "input": {"v": 1}}
    first = client.post("/runs", json=body, headers={"Idempotency-Key": "order-77"})
    again = client.post("/runs", json=body, headers={"Idempotency-Key": "order-77"})
    same = client.post("/runs", json={**body, "idempotency_key": "order-77"})
    assert (first.status_code, again.status_code, same.status_code) == (201, 200, 200)
    assert first.json()["run_id"] == again.json()["run_id"] == same.json()["run_id"]
    agreeing = client.post(
        "/runs",
        json={**body, "idempotency_key": "order-77"},
        headers={"Idempotency-Key": "order-77"},
    )
    assert agreeing.status_code == 200
    before = run_count(client)
    differing = client.post(
        "/runs", json={**body, "idempotency_key": "a"}, headers={"Idempotency-Key": "b"}
    )
    found = problem(differing, 422, "validation_failed")
    assert found["errors"] == [
        {"loc": ["header", "Idempotency-Key"], "msg": "differs from the body"}
    ]
    too_long = client.post("/runs", json=body, headers={"Idempotency-Key": "k" * 257})
    assert problem(too_long, 422, "validation_failed")["errors"][0]["loc"] == [
        "header",
        "Idempotency-Key",
    ]
    assert run_count(client) == before


@pytest.mark.spec("C7 link-header")
def test_every_list_with_a_next_page_links_to_it(client):
    for name in ("one", "two", "three"):
        assert client.post("/v1/api-keys", json={"name": name, "role": "viewer"}).status_code == 201
    seen = []
    url = "/v1/api-keys?limit=2"
    while url:
        page = client.get(url)
        assert page.status_code == 200, page.text
        body = page.json()
        seen += [key["key_id"] for key in body["api_keys"]]
        link = page.headers.get("link")
        assert (link is None) == (body["next_cursor"] is None)
        url = link and link.split(">")[0].lstrip("<")
        if url:
            assert "limit=2" in url and "cursor=" in url
    assert len(seen) == len(set(seen)) >= 3
