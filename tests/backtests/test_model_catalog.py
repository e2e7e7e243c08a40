"""The model catalog (``ECP_MODEL_CATALOG``): its rules, exact prices, and exact costs.

The file is read at start-up; a bad one refuses to start with one line naming the model and the
field. Costs are exact: ``(in * p_in + out * p_out) / 10^6`` for any token counts and prices.
"""

import tomllib
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.models.catalog import (
    MAX_TOKENS,
    PRICE_LIMIT,
    PRICE_PLACES,
    CatalogProblem,
    exact_price,
    parse_catalog,
)
from ecp_core.models.model import CatalogEntry, ProviderKind, TokenUsage
from ecp_core.money import money_problem
from ecp_http.config.model_catalog import read_catalog
from ecp_http.config.settings import Settings, SettingsError

pytestmark = pytest.mark.unit

RULE = "C13 model-catalog"

GOOD = """
[models."fast"]
provider = "openai"
model = "gpt-4o-mini"
base_url = "https://api.openai.com/v1/"
secret_name = "OPENAI_KEY"
family = "openai"
input_usd_per_million = "0.15"
output_usd_per_million = 0.6

[models."careful"]
provider = "anthropic"
model = "claude-sonnet"
base_url = "https://api.anthropic.com"
family = "anthropic"
input_usd_per_million = 3
output_usd_per_million = "15.000000000001"
"""


def table(**changes):
    base = {
        "provider": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:8080/v1",
        "family": "f",
        "input_usd_per_million": "1",
        "output_usd_per_million": "2",
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


def problem(document) -> str:
    with pytest.raises(CatalogProblem) as caught:
        parse_catalog(document)
    return str(caught.value)


@pytest.mark.spec(RULE)
def test_a_catalog_file_gives_each_model_its_provider_secret_family_and_exact_prices(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(GOOD)
    catalog = read_catalog(path)
    assert set(catalog) == {"fast", "careful"}
    fast, careful = catalog["fast"], catalog["careful"]
    assert fast.provider is ProviderKind.OPENAI
    assert (fast.model, fast.secret_name, fast.family) == ("gpt-4o-mini", "OPENAI_KEY", "openai")
    assert fast.base_url == "https://api.openai.com/v1"  # the trailing slash is dropped
    # A TOML float is read as the decimal it spells: 0.6, not 0.59999999999999997779...
    assert fast.output_usd_per_million == Decimal("0.6")
    assert fast.input_usd_per_million == Decimal("0.15")
    assert careful.provider is ProviderKind.ANTHROPIC
    assert careful.secret_name is None
    assert careful.input_usd_per_million == Decimal(3)
    assert careful.output_usd_per_million == Decimal("15.000000000001")


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("value", "expected"),
    [("0.15", Decimal("0.15")), (3, Decimal(3)), (Decimal("0.1"), Decimal("0.1")), ("0", 0)],
)
def test_prices_are_read_exactly(value, expected):
    assert exact_price(value) == expected


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("value", "says"),
    [
        (0.1, "binary float"),
        (True, "boolean"),
        ("cheap", "not a decimal number"),
        ("-1", "must not be negative"),
        ("NaN", "finite"),
        ("Infinity", "finite"),
        (Decimal("inf"), "finite"),
        (str(PRICE_LIMIT), "must be below"),
        ("0." + "0" * PRICE_PLACES + "1", f"at most {PRICE_PLACES} decimal places"),
        ([1], "not list"),
    ],
)
def test_a_price_that_is_not_exact_money_is_refused(value, says):
    with pytest.raises(ValueError, match=says):
        exact_price(value)


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("models", "says"),
    [
        ({"m": table(provider="azure")}, "model 'm': provider: must be openai or anthropic"),
        ({"m": table(model=None)}, "model 'm': model: is required"),
        ({"m": table(family="")}, "model 'm': family: must be non-empty text"),
        ({"m": table(base_url="ftp://x")}, "model 'm': base_url: must be an http:// or https://"),
        ({"m": table(secret_name="../etc")}, "model 'm': secret_name: '../etc' is not a secret"),
        ({"m": table(input_usd_per_million=None)}, "model 'm': input_usd_per_million: is required"),
        ({"m": table(output_usd_per_million="-2")}, "model 'm': output_usd_per_million: must not"),
        ({"m": table(api_key="sk-123")}, "model 'm': api_key: is not a setting"),
        ({"m": "openai"}, "model 'm': must be a table"),
        ({" m": table()}, "model ' m': a model ref is 1 to 200 characters"),
    ],
)
def test_a_bad_model_is_named_with_its_field(models, says):
    assert problem({"models": models}).startswith(says)


@pytest.mark.spec(RULE)
def test_a_catalog_without_models_or_with_other_sections_is_refused():
    assert "names no model" in problem({})
    assert "names no model" in problem({"models": {}})
    assert problem({"models": {"m": table()}, "judges": {}}).startswith("judges: is not a catalog")


# -- read at start-up -----------------------------------------------------------------------


def settings_with(tmp_path, text, **env):
    path = tmp_path / "models.toml"
    path.write_text(text)
    return Settings.from_mapping({"ECP_MODEL_CATALOG": str(path), **env})


@pytest.mark.spec(RULE)
def test_the_settings_read_the_catalog_and_the_call_timeout(tmp_path):
    settings = settings_with(tmp_path, GOOD, ECP_SECRET_OPENAI_KEY="sk-live-secret")
    assert set(settings.model_catalog) == {"fast", "careful"}
    assert settings.model_catalog_path == tmp_path / "models.toml"
    assert settings.model_call_timeout_seconds == 60.0
    assert "sk-live-secret" not in repr(settings)
    plain = Settings.from_mapping({"ECP_MODEL_CALL_TIMEOUT_SECONDS": "2.5"})
    assert (plain.model_catalog, plain.model_catalog_path) == ({}, None)
    assert plain.model_call_timeout_seconds == 2.5
    with pytest.raises(SettingsError, match="ECP_MODEL_CALL_TIMEOUT_SECONDS"):
        Settings.from_mapping({"ECP_MODEL_CALL_TIMEOUT_SECONDS": "0"})


@pytest.mark.spec(RULE)
def test_a_secret_in_the_secrets_directory_satisfies_the_catalog(tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "OPENAI_KEY").write_text("sk-from-a-file\n")
    settings = settings_with(tmp_path, GOOD, ECP_SECRETS_DIR=str(secrets))
    assert settings.model_catalog["fast"].secret_name == "OPENAI_KEY"


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("text", "says"),
    [
        (GOOD.replace('"0.15"', "-0.15"), "model 'fast': input_usd_per_million: must not be"),
        (
            GOOD.replace('provider = "anthropic"', 'provider = "bedrock"'),
            "model 'careful': provider",
        ),
        ("[models.x\n", "is not TOML"),
        (GOOD, "model 'fast': secret_name: the secret 'OPENAI_KEY' is missing"),
    ],
)
def test_a_bad_catalog_refuses_start_up_with_one_line_naming_model_and_field(tmp_path, text, says):
    with pytest.raises(SettingsError) as caught:
        settings_with(tmp_path, text)
    message = str(caught.value)
    file = tmp_path / "models.toml"
    assert message.startswith((f"ECP_MODEL_CATALOG ({file}): ", "ECP_MODEL_CATALOG: "))
    assert says in message
    assert "\n" not in message


@pytest.mark.spec(RULE)
def test_a_missing_catalog_file_refuses_start_up(tmp_path):
    with pytest.raises(SettingsError, match="cannot be read"):
        Settings.from_mapping({"ECP_MODEL_CATALOG": str(tmp_path / "absent.toml")})


# -- exact cost -----------------------------------------------------------------------------

prices = st.decimals(
    min_value=0, max_value=PRICE_LIMIT - Decimal("1E-12"), places=PRICE_PLACES, allow_nan=False
)
counts = st.integers(min_value=0, max_value=MAX_TOKENS)


@pytest.mark.spec(RULE)
@given(p_in=prices, p_out=prices, tokens_in=counts, tokens_out=counts)
def test_cost_is_exact_for_any_token_counts_and_prices(p_in, p_out, tokens_in, tokens_out):
    entry = CatalogEntry(
        model_ref="m",
        provider=ProviderKind.OPENAI,
        model="m",
        base_url="http://127.0.0.1/v1",
        secret_name=None,
        family="f",
        input_usd_per_million=exact_price(str(p_in)),
        output_usd_per_million=exact_price(str(p_out)),
    )
    cost = entry.cost(TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out))
    exact = (tokens_in * Fraction(p_in) + tokens_out * Fraction(p_out)) / 10**6
    assert Fraction(cost) == exact  # never rounded
    assert money_problem(cost) is None  # and always an amount the evidence takes


@pytest.mark.spec(RULE)
@given(price=prices, quoted=st.booleans())
def test_a_price_written_in_toml_is_read_as_exactly_that_decimal(price, quoted):
    spelled = format(price, "f")
    if not quoted and "." not in spelled:
        spelled += ".0"  # an unquoted number with a point is a TOML float
    value = f'"{spelled}"' if quoted else spelled
    text = (
        '[models.m]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://h/v1"\n'
        f'family = "f"\ninput_usd_per_million = {value}\noutput_usd_per_million = 1\n'
    )
    [entry] = parse_catalog(tomllib.loads(text, parse_float=Decimal)).values()
    assert entry.input_usd_per_million == price
