"""clients/openapi.json, which the client libraries are generated from, is the served document."""

import pathlib

import pytest

from ecp_http.openapi import snapshot

pytestmark = pytest.mark.unit

SNAPSHOT = pathlib.Path(__file__).parents[2] / "clients" / "openapi.json"
REGENERATE = "make clients"


@pytest.mark.spec("C18 client-generated")
def test_the_committed_snapshot_is_the_rendering():
    assert SNAPSHOT.read_text(encoding="utf-8") == snapshot.render(), f"regenerate: {REGENERATE}"
