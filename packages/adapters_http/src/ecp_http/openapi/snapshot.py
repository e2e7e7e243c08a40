"""``clients/openapi.json``: the OpenAPI document the client libraries are generated from.

Run ``python -m ecp_http.openapi.snapshot --output clients/openapi.json`` (or ``make clients``)
after changing a route or a model; a test fails while the committed file differs from this
rendering. It describes every operation, the hosted offer's included.
"""

import json
import sys

from ecp_http.openapi import build_document
from ecp_http.openapi.generated_docs import document_main
from ecp_http.server.handlers import all_operations


def render() -> str:
    """The whole document as stable, indented JSON."""
    document = build_document(all_operations(billing_enabled=True, identity_enabled=True))
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.exit(document_main("python -m ecp_http.openapi.snapshot", render))
