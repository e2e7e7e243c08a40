"""The API's graphs models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "Condition",
    "EdgeDefinition",
    "GraphDefinition",
    "GraphListResponse",
    "GraphRegistration",
    "GraphVersion",
]


@attrs.frozen(kw_only=True)
class Condition:
    """An edge rule in CEL over ``state`` (docs/decisions/0003-conditions-in-cel.md)."""

    allow_cycle_traversal: bool = False
    """Whether the edge may close a cycle in the graph."""
    branch_rule: str = "expression"
    """`expression`: evaluate the expression once over `state`; `all` or `any`: once per entry of `operand_refs` with `operand` bound to its value, and take the edge when all (any) hold."""
    expression: str
    """A CEL expression over `state`, the run state; the edge is taken when it is true."""
    metadata: dict[str, Any] = attrs.Factory(dict)
    """Free-form notes kept with the condition."""
    operand_refs: list[str] = attrs.Factory(list)
    """Dotted paths into the run state whose values `all` and `any` bind to `operand` in turn."""


@attrs.frozen(kw_only=True)
class EdgeDefinition:
    """A directed edge, taken when its condition holds (no condition: always)."""

    condition: Condition | None = None
    """When the edge is taken; always when left out."""
    source: str
    """The id of the node the edge leaves."""
    target: str
    """The id of the node the edge enters."""


@attrs.frozen(kw_only=True)
class GraphDefinition:
    """A workflow graph as registered: ``POST /v1/graphs`` body or the Python builder's result."""

    edges: list[EdgeDefinition] = attrs.Factory(list)
    """The directed edges between the nodes."""
    entry: str
    """The id of the node a run starts at."""
    graph_id: str
    """The graph's id within the tenant; registering a changed definition under it makes a new version."""
    max_steps: int = 1000
    """How many node attempts a run may make before it fails."""
    nodes: list[dict[str, Any]]
    """The graph's nodes."""


@attrs.frozen(kw_only=True)
class GraphVersion:
    """An immutable, numbered version of a tenant's graph with its content digest."""

    created_at: datetime
    """When the version was registered."""
    definition: GraphDefinition
    """The definition as registered."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    graph_id: str
    """The graph's id within the tenant."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    version: int
    """The version number, from 1."""


@attrs.frozen(kw_only=True)
class GraphListResponse:
    """The latest version of each graph, by graph id; ``next_cursor`` when more remain."""

    graphs: list[GraphVersion]
    """The tenant's graphs."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class GraphRegistration:
    """Answer to a graph registration: which version the definition is."""

    created: bool
    """Whether this registration made a new version (false: the same definition was registered before)."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    graph_id: str
    """The graph's id within the tenant."""
    version: int
    """The version the definition is: a new one, or the existing one it repeats."""
