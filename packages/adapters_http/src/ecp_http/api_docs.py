"""The API described by its own operations: the OpenAPI document and a readable HTML page.

Both are generated once, on first use. The HTML page is self-contained (no scripts or styles
from a CDN): operations by tag, then every schema as JSON.
"""

import html
import json
import threading
from collections.abc import Sequence
from typing import Any

from ecp_http.openapi import build_document
from ecp_http.routing import Operation

_REF = "#/components/schemas/"

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f6f6f6; padding: .75rem; overflow-x: auto; }
.method { font-weight: bold; text-transform: uppercase; }
"""


def _schema_link(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        name = ref.removeprefix(_REF)
        return f'<a href="#schema-{html.escape(name)}">{html.escape(name)}</a>'
    return f"<code>{html.escape(json.dumps(schema))}</code>"


def _responses(responses: dict[str, Any]) -> str:
    items = []
    for status, response in responses.items():
        content = response.get("content", {})
        links = ", ".join(_schema_link(media.get("schema")) for media in content.values())
        items.append(f"<code>{html.escape(status)}</code> {links}".strip())
    return "<br>".join(items)


def _document_link(version: str) -> str:
    link = '<a href="/openapi.json">/openapi.json</a>'
    return f"<p>The machine-readable document: {link} (OpenAPI {html.escape(version)}).</p>"


def render_html(document: dict[str, Any]) -> str:
    """A readable, self-contained HTML page for an OpenAPI document."""
    info = document["info"]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(info['title'])} API</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(info['title'])} API <small>{html.escape(info['version'])}</small></h1>",
        f"<p>{html.escape(info.get('description', ''))}</p>",
        _document_link(document["openapi"]),
        "<h2>Operations</h2>",
    ]
    rows: dict[str, list[str]] = {}
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            auth = "public" if op.get("security") == [] else "bearer JWT or X-API-Key"
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            params = ", ".join(
                f"{html.escape(p['name'])} ({html.escape(p['in'])})"
                for p in op.get("parameters", [])
            )
            rows.setdefault(op["tags"][0], []).append(
                "<tr>"
                f'<td class="method">{html.escape(method)}</td>'
                f"<td><code>{html.escape(path)}</code></td>"
                f"<td>{html.escape(op.get('summary', ''))}"
                f"<br><small>{html.escape(op.get('description', ''))}</small></td>"
                f"<td>{html.escape(auth)}</td>"
                f"<td>{params}</td>"
                f"<td>{_schema_link(body.get('schema'))}</td>"
                f"<td>{_responses(op.get('responses', {}))}</td>"
                "</tr>"
            )
    header = (
        "<tr><th>Method</th><th>Path</th><th>Summary</th><th>Auth</th>"
        "<th>Parameters</th><th>Body</th><th>Responses</th></tr>"
    )
    for tag, tag_rows in rows.items():
        parts += [f"<h3>{html.escape(tag)}</h3>", f"<table>{header}", *tag_rows, "</table>"]
    parts.append("<h2>Schemas</h2>")
    for name, schema in document["components"]["schemas"].items():
        parts += [
            f'<h3 id="schema-{html.escape(name)}">{html.escape(name)}</h3>',
            f"<pre>{html.escape(json.dumps(schema, indent=2, ensure_ascii=False))}</pre>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts)


class ApiDocs:
    """The document and the page of ``operations``, each built on first use and then kept."""

    def __init__(self, operations: Sequence[Operation]) -> None:
        """Describe ``operations`` (nothing is built yet)."""
        self.operations = tuple(operations)
        self._lock = threading.Lock()
        self._document: dict[str, Any] | None = None
        self._page: str | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document."""
        with self._lock:
            if self._document is None:
                self._document = build_document(self.operations)
            return self._document

    def page(self) -> str:
        """The HTML page."""
        document = self.document()
        with self._lock:
            if self._page is None:
                self._page = render_html(document)
            return self._page
