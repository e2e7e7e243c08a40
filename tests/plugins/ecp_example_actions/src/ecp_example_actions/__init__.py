"""An example ECP action plug-in: ``greet`` says hello to ``arguments.name``."""

from collections.abc import Mapping
from typing import Any

from ecp_core import ActionContext, ActionRegistry

GREET_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def greet(context: ActionContext) -> Mapping[str, Any]:
    """``{"greeting": "Hello, <name>!"}``."""
    return {"greeting": f"Hello, {context.arguments['name']}!"}


def register(registry: ActionRegistry) -> None:
    """The ``ecp.actions`` entry point: register ``greet``."""
    registry.register(
        "greet",
        greet,
        fingerprint="greet/1",
        side_effect="none",
        arguments_schema=GREET_SCHEMA,
    )
