"""The connector test cost arithmetic, the test plan, amounts on the wire, params without secrets."""

import json
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ecp_core.connectors.definitions import ConnectorsProblem, parse_connectors
from ecp_core.connectors.model import BackendType, ConnectorTestRequest, CostScope, usd_amount
from ecp_core.connectors.params import SECRET_WORDS, checked_params, names_a_secret
from ecp_core.connectors.rules import (
    TEST_MAX_TOKENS,
    model_plan,
    reserve,
    room,
    settle,
    worst_case,
)
from ecp_core.errors import SecretValueRefused, ValidationFailed
from ecp_core.models.model import CatalogEntry, ProviderKind
from ecp_core.testing.strategies.evidence import exact_amounts
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

SCOPE = CostScope(tenant_id="acme", campaign_id="c1", run_id=None)
positive = exact_amounts((1, 10**6), (-8, 0))

# One step: reserve an amount, or settle open reservation number i, committing k percent of it.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), positive),
        st.tuples(st.just("settle"), st.integers(0, 50), st.integers(0, 100)),
    ),
    max_size=40,
)


@pytest.mark.spec("§2.6 connector-test-cost-caps")
@given(cap=positive, steps=steps)
def test_committed_plus_reserved_never_passes_the_cap(cap, steps):
    """For any sequence of reserve/commit/release: committed + reserved <= cap, and committed
    <= the sum of the reservations; a reservation is refused exactly when it does not fit."""
    scope, open_ones, reserved_ever, committed = SCOPE, [], Decimal(0), Decimal(0)
    for step in steps:
        if step[0] == "reserve":
            amount = step[1]
            fits = amount <= room(scope, cap)
            held = reserve(scope, amount, cap)
            assert (held is not None) == fits
            if held is not None:
                scope = held
                open_ones.append(amount)
                reserved_ever += amount
        elif open_ones:
            amount = open_ones.pop(step[1] % len(open_ones))
            measured = (amount * step[2]).scaleb(-2)
            scope = settle(scope, amount, measured)
            committed += measured
        assert scope.committed_usd + scope.reserved_usd <= cap
        assert scope.committed_usd <= reserved_ever
        assert scope.committed_usd == committed
        assert scope.reserved_usd == sum(open_ones, Decimal(0))


@pytest.mark.spec("§2.6 connector-test-cost-caps")
@given(amount=positive)
def test_without_a_cap_every_reservation_fits_and_settling_releases_it_whole(amount):
    held = reserve(SCOPE, amount, None)
    assert held is not None
    assert room(held, None) is None
    done = settle(held, amount, Decimal(0))
    assert (done.committed_usd, done.reserved_usd) == (0, 0)
    with pytest.raises(ValueError, match="reservation"):
        settle(SCOPE, amount, Decimal(0))  # nothing was reserved


def entry(input_price: Decimal, output_price: Decimal) -> CatalogEntry:
    return CatalogEntry(
        model_ref="m",
        provider=ProviderKind.OPENAI,
        model="m",
        base_url="http://127.0.0.1:1/v1",
        secret_name=None,
        family="f",
        input_usd_per_million=input_price,
        output_usd_per_million=output_price,
    )


prices = exact_amounts((0, 10**6), (-6, 2))


@pytest.mark.spec("§2.6 connector-test-cost-caps")
@given(input_price=prices, output_price=prices, budget=exact_amounts((0, 10**6), (-9, 0)))
def test_the_plan_is_the_largest_bounded_call_whose_worst_case_fits(
    input_price, output_price, budget
):
    model = entry(input_price, output_price)
    plan = model_plan(model, budget)
    if plan is None:
        assert worst_case(model, 1) > budget
        return
    assert 1 <= plan.max_tokens <= TEST_MAX_TOKENS
    assert plan.reserve_usd == worst_case(model, plan.max_tokens) <= budget
    assert plan.max_tokens == TEST_MAX_TOKENS or worst_case(model, plan.max_tokens + 1) > budget


@pytest.mark.spec("§2.6 connector-test-request")
@given(text=st.decimals(min_value=Decimal("1E-8"), max_value=Decimal(10**6), places=8))
def test_a_json_number_means_the_decimal_it_spells(text):
    """Up to 15 significant digits, a number and its decimal string are the same amount."""
    spelled = format(text.normalize(), "f")
    assume(len(spelled.replace(".", "").lstrip("0")) <= 15 and text > 0)
    number = json.loads(spelled)
    assert usd_amount(number) == usd_amount(spelled) == Decimal(spelled)


@pytest.mark.spec("§2.6 connector-test-request")
@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"campaign_id": "", "operation_id": "o", "max_cost_usd": 1}, "campaign_id"),
        ({"campaign_id": "c", "operation_id": "o" * 129, "max_cost_usd": 1}, "operation_id"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": 0}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": "-1"}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": "NaN"}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": True}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": [1]}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": "1E+16"}, "max_cost_usd"),
        (
            {"campaign_id": "c", "operation_id": "o", "max_cost_usd": 1, "run_cap_usd": 0},
            "run_cap_usd",
        ),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": 1, "run_id": ""}, "run_id"),
        ({"campaign_id": "c", "operation_id": "o"}, "max_cost_usd"),
        ({"campaign_id": "c", "operation_id": "o", "max_cost_usd": 1, "extra": 1}, "extra"),
    ],
)
def test_a_malformed_test_request_names_the_field(body, where):
    with pytest.raises(ValidationFailed) as caught:
        structure(body, ConnectorTestRequest)
    assert where in {str(part) for error in caught.value.errors for part in error.loc}


def test_ids_of_128_characters_and_decimal_strings_are_taken():
    request = structure(
        {
            "campaign_id": "c" * 128,
            "operation_id": "o",
            "max_cost_usd": "0.000000000000000001",
            "run_cap_usd": 2,
            "run_id": "r" * 128,
        },
        ConnectorTestRequest,
    )
    assert usd_amount(request.max_cost_usd) == Decimal("1E-18")


secret_keys = st.builds(
    lambda before, word, after, upper: (
        before + ("".join(c.upper() for c in word) if upper else word) + after
    ),
    st.sampled_from(["", "x_", "my-", "Provider"]),
    st.sampled_from([*SECRET_WORDS, "api_key", "api-key", "private_key", "access_key"]),
    st.sampled_from(["", "_value", "2", "-header"]),
    st.booleans(),
)


@pytest.mark.spec("§2.6 connector-params-no-secrets")
@given(key=secret_keys, kind=st.sampled_from(BackendType), value=st.text(min_size=1))
def test_a_key_naming_a_secret_is_refused_and_its_value_never_echoed(key, kind, value):
    assert names_a_secret(key)
    marked = f"S3CR3T-{value}"
    with pytest.raises(SecretValueRefused) as caught:
        checked_params(kind, {"model_ref": "m", key: marked}, None)
    problem = json.dumps([caught.value.detail, [(e.loc, e.msg) for e in caught.value.errors]])
    assert "S3CR3T" not in problem
    assert ("params", key) in [error.loc for error in caught.value.errors]


@pytest.mark.spec("§2.6 connector-params-no-secrets")
@pytest.mark.parametrize(
    "params",
    [
        {"base_url": "https://api.example.com", "auth_header": "Bearer sk-abcdefghijklmnop"},
        {"base_url": "https://user:pa55word@api.example.com"},
        {"base_url": "https://api.example.com", "path": "sk-proj-abcdefghijklmnopqrst"},
        {"base_url": "https://api.example.com", "header": "Basic dXNlcjpwYXNz"},
    ],
)
def test_values_reading_like_credentials_are_refused(params):
    with pytest.raises(SecretValueRefused) as caught:
        checked_params(BackendType.HTTP, params, None)
    shown = json.dumps([[e.loc, e.msg] for e in caught.value.errors])
    assert "pa55word" not in shown
    assert "abcdefghijklmnop" not in shown
    assert "dXNlcjpwYXNz" not in shown


def test_secret_references_are_taken_and_the_header_defaults():
    params = checked_params(
        BackendType.HTTP,
        {
            "base_url": "https://api.example.com/",
            "path": "/health",
            "auth_secret_ref": "STATUS_KEY",
        },
        None,
    )
    assert params == {
        "base_url": "https://api.example.com",
        "path": "/health",
        "auth_secret_ref": "STATUS_KEY",
        "auth_header": "Authorization",
    }
    assert not names_a_secret("auth_secret_ref")
    assert names_a_secret("secret")


@pytest.mark.parametrize(
    ("kind", "params", "where"),
    [
        (BackendType.MODEL, {}, "model_ref"),
        (BackendType.MODEL, {"model_ref": "absent"}, "model_ref"),
        (BackendType.MODEL, {"model_ref": "m", "base_url": "https://x.example"}, "base_url"),
        (BackendType.HTTP, {}, "base_url"),
        (BackendType.HTTP, {"base_url": "ftp://x.example"}, "base_url"),
        (BackendType.HTTP, {"base_url": "https://x.example?q=1"}, "base_url"),
        (BackendType.HTTP, {"base_url": "https://x.example", "path": "health"}, "path"),
        (
            BackendType.HTTP,
            {"base_url": "https://x.example", "auth_header": "X"},
            "auth_secret_ref",
        ),
        (
            BackendType.HTTP,
            {"base_url": "https://x.example", "auth_header": "Host", "auth_secret_ref": "K"},
            "auth_header",
        ),
        (
            BackendType.HTTP,
            {"base_url": "https://x.example", "auth_secret_ref": "../k"},
            "auth_secret_ref",
        ),
        (
            BackendType.HTTP,
            {"base_url": "https://x.example", "timeout_seconds": 61},
            "timeout_seconds",
        ),
        (
            BackendType.HTTP,
            {"base_url": "https://x.example", "timeout_seconds": True},
            "timeout_seconds",
        ),
        (BackendType.HTTP, {"base_url": "https://x.example", "model_ref": "m"}, "model_ref"),
    ],
)
def test_params_are_checked_per_backend_type(kind, params, where):
    with pytest.raises(ValidationFailed) as caught:
        checked_params(kind, params, {"m": entry(Decimal(1), Decimal(2))})
    assert ("params", where) in [error.loc for error in caught.value.errors]


@pytest.mark.spec("§2.6 connector-resources")
@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({"models": {}}, "models: is not a section"),
        ({"connectors": {"-bad": {"backend_type": "model"}}}, "connector '-bad'"),
        ({"connectors": {"a": {"backend_type": "ftp"}}}, "connector 'a': backend_type"),
        ({"connectors": {"a": {"backend_type": "model", "x": 1}}}, "connector 'a': x"),
        (
            {"connectors": {"a": {"backend_type": "model", "params": {"model_ref": "zz"}}}},
            "params.model_ref",
        ),
        (
            {
                "connectors": {
                    "a": {
                        "backend_type": "http",
                        "params": {"base_url": "https://x.example", "token": "hunter2"},
                    }
                }
            },
            "params.token",
        ),
    ],
)
def test_a_settings_file_fault_names_the_connector_and_field(document, named):
    with pytest.raises(ConnectorsProblem) as caught:
        parse_connectors(document, {"m": entry(Decimal(1), Decimal(2))})
    assert named in str(caught.value)
    assert "hunter2" not in str(caught.value)
