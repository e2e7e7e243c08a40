"""The OpenAPI document's examples: recorded from real answers, valid, and on every operation.

The examples live beside the code that serves them (``ecp_http/openapi/examples``): a request body
the server accepted and the answer it gave, per operation. ``test_the_examples_are_answers_of_
today`` drives two servers on the memory store through the scenario (``openapi_scenario*.py``):
a self-hosted one (the quickstart, then area by area, with models served by the loopback stand-in
provider) and a hosted one (login at the stand-in identity provider, billing at the stand-in
merchant). It compares each answer with its recorded example field by field (values such as ids
and times differ from run to run, the shape may not); ``ECP_RECORD_EXAMPLES=1`` writes the files
afresh instead (ADR 0055). Loopback addresses and secrets shown once are written as examples.
"""

import base64
import json
import os
import pathlib
import time
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import jsonschema
import pytest
from starlette.testclient import TestClient
from tests.support.backtests import KEY, World, world
from tests.support.openapi_scenario import QUICKSTART, Step
from tests.support.openapi_scenario_areas import AREAS
from tests.support.openapi_scenario_evidence import EVIDENCE
from tests.support.openapi_scenario_hosted import HOSTED, MERCHANT_SECRET, SOLO_PRICE
from tests.support.openapi_scenario_models import MODELS, arm
from tests.support.openapi_scenario_webhooks import RECEIVER, WEBHOOKS
from tests.support.receiver import Receiver, receiver

from ecp_billing import StandinMerchant
from ecp_core.memory import MemoryStore
from ecp_http.config.hosted import BillingSettings, HostedSettings, IdentitySettings
from ecp_http.config.settings import Settings
from ecp_http.openapi import build_document
from ecp_http.openapi import examples as api_examples
from ecp_http.server.auth import mint_token
from ecp_http.server.handlers import all_operations
from ecp_http.server.routing import Operation
from ecp_http.startup.app import create_app
from ecp_idp.standin import Login, StandinIdentityProvider

pytestmark = [pytest.mark.integration, pytest.mark.spec("C1 openapi-examples")]

SECRET = "examples-" + "e" * 32
MERCHANT_KEY = "merchant-key-" + "k" * 16
IDP_KEY = "sk_test_examples_" + "i" * 16
COOKIE_PASSWORD = "examples-cookie-password-" + "p" * 16
EXAMPLES = pathlib.Path(api_examples.__file__).parent
RECORD = os.environ.get("ECP_RECORD_EXAMPLES") == "1"
SCENARIO = [*QUICKSTART, *AREAS, *MODELS, *EVIDENCE, *WEBHOOKS]
"""The self-hosted server's calls; ``HOSTED`` are the hosted server's."""
EXAMPLE_TARGET = "https://hooks.example.com/ecp"
"""The webhook target the recorded examples show in place of the loopback receiver's URL."""
EXAMPLE_MERCHANT = "https://pay.example.com"
"""The merchant the recorded examples show in place of the loopback stand-in's URL."""
ORIGIN = "http://testserver"
"""Where the hosted server's test client sends its calls (the browser's origin)."""
EXAMPLE_KEY_SECRET = (
    base64.urlsafe_b64encode(b"example-api-key-secret-32-bytes!").decode().rstrip("=")
)
"""What examples show of an API key after its public ``ecp_<key id>_`` (unpadded base64url)."""
EXAMPLE_WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"example-signing-secret-32-bytes!").decode()
"""What examples show of a webhook signing secret (32 bytes in base64, as real ones)."""


def _operations() -> dict[str, Operation]:
    every = all_operations(billing_enabled=True, identity_enabled=True)
    return {operation.operation_id: operation for operation in every}


def _takes_json(operation: Operation) -> bool:
    return operation.body is not None


def _answers_json(operation: Operation) -> bool:
    """Whether the success answer is a JSON model (not the document itself, nor text)."""
    return (
        operation.status != 204
        and operation.media_type == "application/json"
        and attrs.has(operation.response)
    )


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return build_document(all_operations(billing_enabled=True, identity_enabled=True))


@pytest.fixture(scope="module")
def target() -> Iterator[Receiver]:
    """A webhook receiver that refuses every delivery, so that one attempt makes a dead letter."""
    with receiver(default=500) as refusing:
        yield refusing


@pytest.fixture(scope="module")
def models() -> Iterator[World]:
    """The loopback stand-in provider serving the backtest's models, scripted."""
    with world() as stand_in:
        yield arm(stand_in)


def _seed(first: int) -> str:
    return base64.b64encode(bytes(range(first, first + 32))).decode("ascii")


@pytest.fixture(scope="module")
def client(target, models) -> Iterator[TestClient]:
    settings = Settings(
        jwt_secret=SECRET,
        audit_signing_key=_seed(7),
        dispatch_poll_seconds=0.02,
        webhook_max_attempts=1,
        webhook_allow_private_targets=True,  # the receiver is on 127.0.0.1
        webhook_poll_seconds=0.02,
        model_catalog=dict(models.setup().provider.catalog),
        backtest_digest_key=KEY,
        backtest_digest_key_id="current",
    )
    with TestClient(create_app(settings, storage=MemoryStore())) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def merchant() -> Iterator[StandinMerchant]:
    with StandinMerchant(api_key=MERCHANT_KEY, webhook_secret=MERCHANT_SECRET) as standin:
        yield standin


@pytest.fixture(scope="module")
def hosted(merchant) -> Iterator[TestClient]:
    """The hosted server: login at the stand-in identity provider, billing at the merchant."""
    with StandinIdentityProvider(client_id="client_examples", api_key=IDP_KEY) as idp:
        idp.next_login = Login(user_id="user_ada", organization_id="org_acme", roles=("admin",))
        identity = IdentitySettings(
            enabled=True,
            client_id="client_examples",
            api_key=IDP_KEY,
            redirect_uri=ORIGIN + "/v1/cloud/auth/callback",
            cookie_password=COOKIE_PASSWORD,
            browser_origin=ORIGIN,
            base_url=idp.url,
            allow_insecure_cookies=True,  # the test client speaks plain HTTP
        )
        billing = BillingSettings(
            enabled=True,
            api_key=MERCHANT_KEY,
            webhook_secret=MERCHANT_SECRET,
            solo_price_id=SOLO_PRICE,
            base_url=merchant.url,
        )
        settings = Settings(
            jwt_secret=SECRET,
            audit_signing_key=_seed(9),
            hosted=HostedSettings(identity=identity, billing=billing),
        )
        app = create_app(settings, storage=MemoryStore(), start_workers=False)
        with TestClient(app, base_url=ORIGIN) as test_client:
            yield test_client


def _call(client: TestClient, operation: Operation, step: Step, ids: dict[str, Any]) -> Any:
    """Make the step's call (again, while its ``until`` does not hold yet) and check its status."""
    headers = dict(step.headers)
    if step.role is not None:
        token = mint_token(SECRET, tenant="acme", roles=[step.role])
        headers["Authorization"] = f"Bearer {token}"
    body, content = step.sent(ids), None
    if step.signed is not None:  # the signature covers the very bytes sent
        body, content = None, json.dumps(body).encode("utf-8")
        headers.update({"Content-Type": "application/json", **step.signed(content)})
    deadline = time.monotonic() + 30
    while True:
        answer = client.request(
            operation.method,
            operation.path.format(**step.path(ids)),
            params=step.params(ids),
            json=body,
            content=content,
            headers=headers,
            follow_redirects=False,
        )
        assert answer.status_code == operation.status, (step.operation_id, answer.text)
        if step.until is None or step.until(answer.json()) or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def _record(client: TestClient, scenario: Sequence[Step], ids: dict[str, Any]) -> dict[str, Any]:
    """Run ``scenario``; the request body and the answer of each step, by example name."""
    operations = _operations()
    recorded: dict[str, Any] = {}
    for step in scenario:
        operation = operations[step.operation_id]
        body = step.sent(ids)
        answer = _call(client, operation, step, ids)
        if _answers_json(operation):
            ids.update(step.keep(answer.json()))
        if step.redirected is not None:
            ids.update(step.redirected(answer.headers["location"]))
        if not step.record:
            continue
        if body is not None and _takes_json(operation):
            recorded[f"{step.operation_id}.{api_examples.REQUEST}"] = body
        if _answers_json(operation):
            recorded[f"{step.operation_id}.{api_examples.RESPONSE}"] = answer.json()
    return recorded


def _shape(value: Any) -> Any:
    """The keys of every object (a list by its first item) and the JSON type of every leaf."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def _shown(value: Any) -> Any:
    """``value`` with each secret shown once (an API key, a webhook secret) as its example."""
    if isinstance(value, list):
        return [_shown(item) for item in value]
    if not isinstance(value, dict):
        return value
    shown = {name: _shown(item) for name, item in value.items()}
    if isinstance(shown.get("key"), str) and "fingerprint" in shown:  # an API key made
        shown["key"] = f"{shown['fingerprint']}_{EXAMPLE_KEY_SECRET}"
    if isinstance(shown.get("secret"), str):  # a webhook subscription's signing secret
        shown["secret"] = EXAMPLE_WEBHOOK_SECRET
    return shown


def test_the_examples_are_answers_of_today(client, target, hosted, merchant):
    recorded = _record(client, SCENARIO, {RECEIVER: target.url})
    recorded |= _record(hosted, HOSTED, {})
    if RECORD:
        for name in api_examples.recorded() - set(recorded):
            (EXAMPLES / f"{name}.json").unlink()
        for name, value in recorded.items():
            text = json.dumps(_shown(value), indent=2, ensure_ascii=False) + "\n"
            text = text.replace(target.url, EXAMPLE_TARGET).replace(merchant.url, EXAMPLE_MERCHANT)
            (EXAMPLES / f"{name}.json").write_text(text, encoding="utf-8")
        pytest.skip("the examples were recorded afresh")
    assert set(recorded) == api_examples.recorded()
    for name, value in recorded.items():
        stored = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        assert _shape(stored) == _shape(value), name


def _validate(document: dict[str, Any], schema: dict[str, Any], value: Any) -> None:
    root = {**document, **schema}  # "#/components/..." refers into the document
    validator = jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())
    validator.validate(value)


def test_every_example_is_valid_against_its_schema(document):
    checked = 0
    for methods in document["paths"].values():
        for entry in methods.values():
            bodies = [*entry.get("requestBody", {}).get("content", {}).values()]
            bodies += [
                media
                for response in entry["responses"].values()
                for media in response.get("content", {}).values()
            ]
            for media in bodies:
                if "example" in media:
                    _validate(document, media["schema"], media["example"])
                    checked += 1
    assert checked >= len(api_examples.recorded())


def test_every_operation_has_its_examples():
    """A body the operation takes and a JSON answer it gives each have a recorded example."""
    operations = _operations()
    recorded = api_examples.recorded()
    missing = []
    for operation_id, operation in operations.items():
        wanted = [api_examples.REQUEST] if _takes_json(operation) else []
        wanted += [api_examples.RESPONSE] if _answers_json(operation) else []
        missing += [f"{operation_id}.{part}" for part in wanted]
    assert [name for name in missing if name not in recorded] == []
    assert {name.rpartition(".")[0] for name in recorded} <= operations.keys()  # no orphans


def test_no_example_shows_a_loopback_address_or_a_secret():
    """What the tests ran on stays out: stand-ins' addresses, the servers' and stand-ins' keys."""
    secrets = [SECRET, MERCHANT_SECRET, MERCHANT_KEY, IDP_KEY, COOKIE_PASSWORD]
    for name in sorted(api_examples.recorded()):
        text = (EXAMPLES / f"{name}.json").read_text(encoding="utf-8")
        assert not [word for word in ("127.0.0.1", "localhost", *secrets) if word in text], name
        assert _shown(json.loads(text)) == json.loads(text), name  # secrets shown once: examples
