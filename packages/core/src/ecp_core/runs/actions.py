"""Action handlers: the registry and the built-in ``echo`` and ``set``."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import attrs

from ecp_core.canonical import canonical_json, thaw
from ecp_core.graphs.definition import ActionDescriptorV1


@attrs.frozen(kw_only=True)
class ActionContext:
    """What a handler sees: the (possibly reviewer-edited) arguments and the run state."""

    run_id: str
    tenant_id: str
    node_id: str
    descriptor: ActionDescriptorV1
    arguments: Mapping[str, Any]
    state: Mapping[str, Any]


@attrs.frozen(kw_only=True)
class ActionResult:
    """A handler's full answer; returning a plain mapping means ``ActionResult(output=…)``."""

    output: Mapping[str, Any]
    stdout: str | None = None
    stderr: str | None = None
    tool_calls: list[Any] | None = None
    memory_interactions: list[Any] | None = None
    validation_results: Any = None


class ActionHandler(Protocol):
    """Runs one action; its output object is merged into the run state."""

    def __call__(self, context: ActionContext) -> Mapping[str, Any] | ActionResult:
        """Do the work; raise to fail the attempt."""
        ...


def echo(context: ActionContext) -> Mapping[str, Any]:
    """Return the arguments as the output."""
    return dict(context.arguments)


def set_values(context: ActionContext) -> Mapping[str, Any]:
    """Return ``arguments.values`` as the output (an object, or an error)."""
    values = context.arguments.get("values", {})
    if not isinstance(values, dict):
        msg = "set needs arguments.values to be an object"
        raise TypeError(msg)
    return values


class ActionRegistry:
    """Handlers by action name. Starts with the built-ins unless told otherwise."""

    def __init__(self, *, builtins: bool = True) -> None:
        """Create a registry, with ``echo`` and ``set`` when ``builtins``."""
        self._handlers: dict[str, Callable[[ActionContext], Any]] = {}
        if builtins:
            self.register("echo", echo)
            self.register("set", set_values)

    def register(self, name: str, handler: ActionHandler | Callable[[ActionContext], Any]) -> None:
        """Make ``handler`` run actions called ``name`` (replacing any earlier one)."""
        self._handlers[name] = handler

    def get(self, name: str) -> Callable[[ActionContext], Any] | None:
        """The handler for ``name``, or None."""
        return self._handlers.get(name)

    def names(self) -> Iterable[str]:
        """Every registered name."""
        return self._handlers.keys()


def checked_result(name: str, returned: object) -> ActionResult:
    """A handler's answer as detached, canonical JSON; TypeError or NotCanonicalizable if not."""
    result = returned if isinstance(returned, ActionResult) else ActionResult(output=returned)  # type: ignore[arg-type]
    if not isinstance(result.output, Mapping):
        msg = f"action {name!r} returned {type(result.output).__name__}, not an object"
        raise TypeError(msg)
    for text in (result.stdout, result.stderr):
        if text is not None and not isinstance(text, str):
            msg = f"action {name!r} returned stdout or stderr that is not text"
            raise TypeError(msg)
    detached = ActionResult(
        output=thaw(result.output),
        stdout=result.stdout,
        stderr=result.stderr,
        tool_calls=thaw(result.tool_calls),
        memory_interactions=thaw(result.memory_interactions),
        validation_results=thaw(result.validation_results),
    )
    canonical_json(
        [
            detached.output,
            detached.stdout,
            detached.stderr,
            detached.tool_calls,
            detached.memory_interactions,
            detached.validation_results,
        ]
    )
    return detached
