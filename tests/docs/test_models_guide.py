"""docs/models.md's catalog example is a catalog the service reads, exactly as written."""

import pathlib
import re
import tomllib
from decimal import Decimal

import pytest

from ecp_core.models.catalog import parse_catalog
from ecp_core.models.model import ProviderKind, TokenUsage

pytestmark = pytest.mark.unit

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "models.md"


def test_the_guides_catalog_reads_with_exact_prices():
    (block,) = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    catalog = parse_catalog(tomllib.loads(block, parse_float=Decimal))
    assert set(catalog) == {"gpt-small", "claude-judge"}
    small = catalog["gpt-small"]
    assert small.provider is ProviderKind.OPENAI
    assert small.secret_name == "OPENAI"
    assert small.cost(TokenUsage(input_tokens=1000, output_tokens=500)) == Decimal("0.00045")
    assert catalog["claude-judge"].family != small.family
