"""What each field of a wire model means, read from the model itself (ADR 0055).

A field is described by ``metadata={"description": ...}`` on its ``attrs.field``, or else by
the string literal written right below it in the class body (an attribute docstring, as the
documentation tools of the Python ecosystem read them)::

    @attrs.frozen
    class Run:
        run_id: str
        \"\"\"The run's id, unique within the tenant.\"\"\"

A class inherits the descriptions of the classes it extends. Only the first paragraph is kept,
with its lines joined. A field of a name in :data:`SHARED_FIELDS` that is described nowhere
else takes the meaning that name has in every model (ids, times, cursors).
"""

import ast
import functools
import inspect
import itertools
import textwrap

import attrs

SHARED_FIELDS: dict[str, str] = {
    "tenant_id": "The tenant it belongs to; every read and write is scoped to the caller's.",
    "run_id": "The run's id.",
    "deployment_ref": "The deployment's name within the tenant.",
    "graph_id": "The graph's id within the tenant.",
    "graph_version_ref": "The graph version, as `<graph_id>@<version>`.",
    "approval_id": "The approval's id.",
    "node_id": "The id of a node of the run's graph.",
    "task_id": "The task's id.",
    "hold_id": "The legal hold's id.",
    "certification_id": "The certification's id.",
    "backtest_id": "The backtest's id.",
    "subscription_id": "The webhook subscription's id.",
    "delivery_id": "The webhook delivery's id.",
    "correlation_id": "The id the attestation is filed under; the first submission for it wins.",
    "thread_id": "The thread the run belongs to; runs started with the same thread share it.",
    "workspace_id": "The workspace within the tenant, when there is one.",
    "signing_key_id": "The id of the signing key (`GET /v1/audit/signing-keys` lists them).",
    "lock_token": "Proves the worker holds the task; sent back with heartbeat, complete and fail.",
    "locked_until": "When the worker's hold on the task ends unless a heartbeat extends it.",
    "next_cursor": "The cursor of the next page (also in the `Link` header); null on the last.",
    "created_at": "When it was created (RFC 3339, UTC).",
    "updated_at": "When it last changed (RFC 3339, UTC).",
    "occurred_at": "When it happened (RFC 3339, UTC).",
    "expires_at": "When it stops being valid (RFC 3339, UTC).",
    "created_by": "Who created it (the caller's subject).",
    "requested_by": "Who asked for it.",
    "event_id": "The event's id.",
    "workflow_id": "The workflow the evidence is about (a deployment or graph, as the caller names it).",
    "workflow_version": "The version of that workflow.",
    "digest_version": "How audit record digests are computed (docs/audit-format.md).",
}
"""What a field of each of these names means in every wire model that has one."""


def _first_paragraph(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split("\n\n", 1)[0].split())


@functools.cache
def _docstrings_in_body(cls: type) -> dict[str, str]:
    """The attribute docstrings written in ``cls``'s own class body (none without source)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # built at run time, or no source shipped
        return {}
    tree = ast.parse(source)
    body = next((node.body for node in tree.body if isinstance(node, ast.ClassDef)), [])
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if not (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            continue
        text = _first_paragraph(following.value.value)
        if text:
            found[statement.target.id] = text
    return found


def field_description(cls: type, name: str) -> str | None:
    """The description of field ``name`` (its Python name) of the attrs class ``cls``."""
    field = getattr(attrs.fields(cls), name, None)
    if field is not None:
        given = field.metadata.get("description")
        if isinstance(given, str) and given:
            return _first_paragraph(given)
    for klass in cls.__mro__:
        found = _docstrings_in_body(klass).get(name)
        if found is not None:
            return found
    return SHARED_FIELDS.get(name)
