"""``GET /docs`` and its assets over HTTP: shipped files, the strict policy, long caching (ADR 0056).

The browser test (``tests/docs/test_api_reference_page.py``) shows the page working; these show what it
is made of: every script a file of this origin, a policy without ``unsafe-inline`` or
``unsafe-eval``, assets under names that change with their bytes, kept for a year.
"""

import base64
import gzip
import hashlib
import html.parser
import importlib.resources
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import Settings
from ecp_http.server.api_reference import REFERENCE_POLICY, Asset
from ecp_http.server.pages.render import CONTENT_SECURITY_POLICY
from ecp_http.startup.app import create_app

pytestmark = pytest.mark.integration

SHIPPED = importlib.resources.files("ecp_http.server").joinpath("static/docs")


class _Tags(html.parser.HTMLParser):
    """The start tags of a page, with their attributes, and the text inside ``<script>``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text = ""
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.script_text += data


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = Settings(
        jwt_secret="reference-" + "s" * 40,
        audit_signing_key=base64.b64encode(bytes(range(32))).decode("ascii"),
    )
    with TestClient(create_app(settings, storage=MemoryStore(), start_workers=False)) as client:
        yield client


def _page(client) -> _Tags:
    answer = client.get("/docs")
    assert answer.status_code == 200
    parsed = _Tags()
    parsed.feed(answer.text)
    return parsed


def _asset_urls(client) -> list[str]:
    page = _page(client)
    scripts = [attrs["src"] for tag, attrs in page.tags if tag == "script"]
    sheets = [attrs["href"] for tag, attrs in page.tags if attrs.get("rel") == "stylesheet"]
    return ["/" + url for url in (*sheets, *scripts) if url]


@pytest.mark.spec("C1 openapi")
def test_the_page_runs_no_inline_script_under_the_strict_policy(client):
    answer = client.get("/docs")
    assert answer.headers["content-type"].startswith("text/html")
    policy = answer.headers["content-security-policy"]
    assert policy == REFERENCE_POLICY
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    # The hosted pages' policy, widened only where Swagger UI needs it.
    hosted = dict(part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";"))
    widened = {name for name in hosted if directives[name] != hosted[name]}
    assert widened == {"img-src"}
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-cache"
    page = _page(client)
    assert page.script_text.strip() == ""  # every script is a file
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert scripts
    assert all(attrs.get("src", "").startswith("static/docs/") for attrs in scripts)
    assert not [attrs for _, attrs in page.tags if "style" in attrs or "onload" in attrs]
    assert client.get("/openapi.json").status_code == 200  # the document the page loads


@pytest.mark.spec("C1 openapi")
def test_the_assets_are_the_shipped_files_kept_for_a_year(client):
    urls = _asset_urls(client)
    names = {url.rsplit("/", 1)[1] for url in urls}
    assert {re.sub(r"\.[0-9a-f]{12}\.", ".", name) for name in names} == {
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "ecp-docs.js",
    }
    for url in urls:
        answer = client.get(url, headers={"Accept-Encoding": "identity"})
        assert answer.status_code == 200, url
        source = re.sub(r"\.[0-9a-f]{12}\.", ".", url.rsplit("/", 1)[1])
        shipped = SHIPPED.joinpath(source).read_bytes()
        assert answer.content == shipped
        assert hashlib.sha256(shipped).hexdigest()[:12] in url  # the name changes with the bytes
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.headers["x-content-type-options"] == "nosniff"
        kind = "text/css" if url.endswith(".css") else "text/javascript"
        assert answer.headers["content-type"].startswith(kind)
        assert "content-encoding" not in answer.headers


def test_assets_are_gzipped_for_clients_that_take_it(client):
    url = next(url for url in _asset_urls(client) if "swagger-ui-bundle" in url)
    answer = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.headers["vary"] == "Accept-Encoding"
    assert answer.content == SHIPPED.joinpath("swagger-ui-bundle.js").read_bytes()  # decoded
    assert int(answer.headers["content-length"]) < len(answer.content) / 2


def test_an_unknown_or_stale_asset_is_not_found(client):
    stale = "/static/docs/swagger-ui-bundle.000000000000.js"
    for url in (stale, "/static/docs/swagger-ui-bundle.js", "/static/docs/LICENSE"):
        answer = client.get(url)
        assert answer.status_code == 404, url
        assert answer.json()["code"] == "not_found"


def test_an_asset_name_carries_a_digest_of_its_bytes():
    css = Asset.load("swagger-ui.css", "text/css")
    assert css.name == f"swagger-ui.{hashlib.sha256(css.body).hexdigest()[:12]}.css"
    assert gzip.decompress(css.gzipped) == css.body


def test_the_shipped_renderer_names_its_package_version_and_licenses():
    version = SHIPPED.joinpath("VERSION").read_text("utf-8").strip()
    assert re.fullmatch(r"swagger-ui-dist@\d+\.\d+\.\d+", version)
    for name in ("LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt", "README.md"):
        assert SHIPPED.joinpath(name).read_text("utf-8").strip(), name
    assert "Apache License" in SHIPPED.joinpath("LICENSE").read_text("utf-8")
