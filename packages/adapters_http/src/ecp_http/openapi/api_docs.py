"""The API described by its own operations: the OpenAPI document and its reference page.

Both are built once, on first use: the document from the operations, the page and its assets
from the files :mod:`ecp_http.server.api_reference` ships.
"""

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ecp_http.openapi import build_document
from ecp_http.server.api_reference import Asset, load_assets, render_page
from ecp_http.server.routing import Operation


class ApiDocs:
    """The document, the reference page and its assets, each built on first use and then kept."""

    def __init__(self, operations: Sequence[Operation]) -> None:
        """Describe ``operations`` (nothing is built yet)."""
        self.operations = tuple(operations)
        self._lock = threading.Lock()
        self._document: dict[str, Any] | None = None
        self._assets: Mapping[str, Asset] | None = None
        self._page: str | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document."""
        with self._lock:
            if self._document is None:
                self._document = build_document(self.operations)
            return self._document

    def assets(self) -> Mapping[str, Asset]:
        """The page's assets by their fingerprinted names."""
        with self._lock:
            if self._assets is None:
                self._assets = load_assets()
            return self._assets

    def page(self) -> str:
        """The HTML page."""
        title = self.document()["info"]["title"]
        assets = list(self.assets().values())
        with self._lock:
            if self._page is None:
                self._page = render_page(title, assets)
            return self._page
