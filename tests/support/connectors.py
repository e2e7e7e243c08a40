"""A connector world for tests: the loopback stand-in model provider, a model catalog and a
connectors file on disk, and the server's settings read from them like the environment.

The model ``fast`` costs 2500 USD per million input and 15000 per million output tokens, so a
test's worst case (64 input, 16 output tokens) is exactly 0.4 USD and the stand-in's default
answer (10 and 5 tokens) exactly 0.1 USD.
"""

import base64
import pathlib
from collections.abc import Iterator
from contextlib import contextmanager

from ecp_http.config.settings import Settings
from ecp_http.outbound.model_calls.standin import StandinModels
from ecp_http.server.auth import mint_token

SECRET = "c" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")
STATUS_SECRET = "status-secret-value-7f3a9c"
WORST_CASE = "0.4"
DEFAULT_ANSWER_COST = "0.1"


def catalog_toml(url: str) -> str:
    """The catalog with ``fast`` served by the stand-in at ``url``."""
    return (
        '[models."fast"]\n'
        'provider = "openai"\n'
        'model = "fast"\n'
        f'base_url = "{url}/v1"\n'
        'family = "standin"\n'
        'input_usd_per_million = "2500"\n'
        'output_usd_per_million = "15000"\n'
    )


CONNECTORS_TOML = """
[connectors."env-model"]
backend_type = "model"
params = { model_ref = "fast" }

[connectors."env-status"]
backend_type = "http"
params = { base_url = "https://status.example.com", path = "/health", timeout_seconds = 2.5 }
"""


def environment(directory: pathlib.Path, standin_url: str, **extra: str) -> dict[str, str]:
    """The settings a server of this world is started with (files written to ``directory``)."""
    catalog = directory / "catalog.toml"
    catalog.write_text(catalog_toml(standin_url))
    connectors = directory / "connectors.toml"
    connectors.write_text(CONNECTORS_TOML)
    return {
        "ECP_JWT_SECRET": SECRET,
        "ECP_AUDIT_SIGNING_KEY": SEED,
        "ECP_MODEL_CATALOG": str(catalog),
        "ECP_CONNECTORS_FILE": str(connectors),
        "ECP_SECRET_STATUS_KEY": STATUS_SECRET,
        "ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS": "true",
        "ECP_CONNECTOR_TEST_TIMEOUT_SECONDS": "5",
        **extra,
    }


def settings(directory: pathlib.Path, standin_url: str, **extra: str) -> Settings:
    """The server's settings, read like the environment."""
    return Settings.from_mapping(environment(directory, standin_url, **extra))


def auth(role: str = "admin", tenant: str = "acme") -> dict[str, str]:
    """A bearer token header for ``role`` in ``tenant``."""
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=tenant, roles=[role])}"}


@contextmanager
def standin() -> Iterator[StandinModels]:
    """A running stand-in provider."""
    with StandinModels() as models:
        yield models
