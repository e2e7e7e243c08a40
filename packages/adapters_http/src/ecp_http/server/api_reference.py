"""The API reference page (``GET /docs``): Swagger UI over the OpenAPI document (ADR 0056).

Its files ship in this package (``static/docs/``): nothing comes from a CDN, and the page runs
under a Content-Security-Policy that allows scripts, styles and requests from this origin only.
Every script is a file; none is inline.
"""

import gzip
import hashlib
import html
import importlib.resources
from collections.abc import Mapping, Sequence

import attrs

from ecp_http.server.pages.render import CONTENT_SECURITY_POLICY

ASSETS_PATH = "/static/docs"
"""Where the reference page's scripts and stylesheets are served, under fingerprinted names."""

_SOURCES = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "ecp-docs.js": "text/javascript; charset=utf-8",
}
"""The files of ``static/docs/`` the page loads, in the order it loads them."""


def _policy() -> str:
    """The hosted pages' policy, widened by what Swagger UI needs and no more.

    Scripts and requests (for ``/openapi.json`` and "Try it out") from this origin; images also
    as ``data:`` URIs, which the stylesheet's icons are.
    """
    directives = dict(
        part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";") if part.strip()
    )
    directives |= {
        "script-src": "'self'",
        "connect-src": "'self'",
        "img-src": "'self' data:",
        "base-uri": "'none'",
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


REFERENCE_POLICY = _policy()
"""The Content-Security-Policy of ``/docs`` and its assets."""
_SECURITY_HEADERS = {
    "Content-Security-Policy": REFERENCE_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
PAGE_HEADERS = {**_SECURITY_HEADERS, "Cache-Control": "no-cache"}
"""Sent with the page: it names the assets' current fingerprints, so it is always revalidated."""
ASSET_HEADERS = {**_SECURITY_HEADERS, "Cache-Control": "public, max-age=31536000, immutable"}
"""Sent with an asset: its name changes whenever its bytes do, so it may be kept for a year."""


@attrs.frozen
class Asset:
    """One file of the reference page, under a name that carries a digest of its bytes."""

    name: str
    media_type: str
    body: bytes
    gzipped: bytes

    @classmethod
    def load(cls, source: str, media_type: str) -> "Asset":
        """``static/docs/<source>`` read from the package, fingerprinted and compressed once."""
        body = (
            importlib.resources.files("ecp_http.server")
            .joinpath("static/docs", source)
            .read_bytes()
        )
        stem, _, extension = source.rpartition(".")
        digest = hashlib.sha256(body).hexdigest()[:12]
        return cls(
            name=f"{stem}.{digest}.{extension}",
            media_type=media_type,
            body=body,
            gzipped=gzip.compress(body, mtime=0),
        )


def render_page(title: str, assets: Sequence[Asset]) -> str:
    """The reference page: Swagger UI's stylesheet and scripts, each from its own file."""
    links = [
        f'<link rel="stylesheet" href="{ASSETS_PATH[1:]}/{asset.name}">'
        for asset in assets
        if asset.name.endswith(".css")
    ]
    scripts = [
        f'<script src="{ASSETS_PATH[1:]}/{asset.name}"></script>'
        for asset in assets
        if asset.name.endswith(".js")
    ]
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)} API reference</title>",
            '<link rel="icon" href="data:,">',
            *links,
            "</head><body>",
            '<div id="swagger-ui"></div>',
            (
                "<noscript><p>The API reference needs JavaScript; the document itself is at "
                '<a href="openapi.json">/openapi.json</a>.</p></noscript>'
            ),
            *scripts,
            "</body></html>",
        ]
    )


def load_assets() -> Mapping[str, Asset]:
    """The page's assets by their fingerprinted names, in the order the page loads them."""
    loaded = [Asset.load(source, media_type) for source, media_type in _SOURCES.items()]
    return {asset.name: asset for asset in loaded}
