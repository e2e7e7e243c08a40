"""The API's evidence models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

import attrs

__all__ = [
    "IngestResult",
]


@attrs.frozen(kw_only=True)
class IngestResult:
    """What a batch did: events newly stored and exact replays left as they were."""

    received: int
    """Events in the batch."""
    replayed: int
    """Exact repeats of stored events, left as they were."""
    stored: int
    """Events newly stored."""
