"""ARCHITECTURE rule 1: importing the core loads no framework, driver or adapter."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

FORBIDDEN = (
    "starlette",
    "uvicorn",
    "psycopg",
    "psycopg_pool",
    "httpx",
    "statsmodels",
    "prometheus_client",
    "opentelemetry",
    "scipy",
    "numpy",
    "yoyo",
    "ecp_http",
    "ecp_postgres",
    "ecp_idp",
    "ecp_billing",
    "ecp_client",
)


def test_core_imports_no_adapter_or_framework():
    code = "import ecp_core, ecp_core.demo, sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = json.loads(out.stdout)
    leaked = [m for m in loaded if m.split(".")[0] in FORBIDDEN]
    assert leaked == []
    assert "ecp_core" in loaded
