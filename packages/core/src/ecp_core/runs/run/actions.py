"""Action handlers: the registry with each action's descriptor metadata, and ``echo`` and ``set``."""

import enum
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ecp_core.canonical import canonical_json, thaw
from ecp_core.graphs.definition import ActionDescriptorV1
from ecp_core.types import Capability, SideEffectClass

if TYPE_CHECKING:
    from ecp_core.ports.runs import RunsUnit

AttemptWrite = Callable[["RunsUnit"], object]
"""Work an action asks of its attempt's unit of work (ADR 0098): called with that unit after the
attempt's audit record is written, so it commits with the attempt or rolls back with it."""


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
    in_attempt: tuple[AttemptWrite, ...] = ()
    """Writes made in the attempt's unit of work, committed or rolled back with it (ADR 0098)."""


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


class ActionSource(enum.StrEnum):
    """Where a registered action comes from, as ``GET /v1/actions`` says."""

    BUILTIN = "builtin"
    """Shipped with the service (``echo``, ``set``, the server's own)."""
    PLUGIN = "plugin"
    """Registered by an application: an ``ecp.actions`` entry point, the server's ``ECP_ACTION_MODULES`` or
    an embedding program."""
    TASK = "task"
    """Served by external workers (task nodes)."""


@attrs.frozen(kw_only=True)
class RegisteredAction:
    """What the service can run under one name: its descriptor metadata and where it came from."""

    name: str
    """The name a graph's action node calls it by."""
    fingerprint: str
    """The version of its behaviour, as `<name>/<version>`; a node pins it."""
    capability_refs: tuple[Capability, ...] = ()
    """What the action may do (network, files, processes); a deployment policy can deny these."""
    side_effect: SideEffectClass = SideEffectClass.UNKNOWN
    """Whether calling it changes anything outside the run."""
    arguments_schema: dict[str, Any] | None = None
    """A JSON Schema of the arguments, for people and tools; None when the action states none."""
    source: ActionSource = ActionSource.PLUGIN
    """Where it comes from: shipped with the service, or registered by an application."""


@attrs.frozen(kw_only=True)
class ActionListResponse:
    """The body of ``GET /v1/actions``: every registered action, by name."""

    actions: list[RegisteredAction]
    """Every action a graph may call, as registered on this server."""


class ActionAlreadyRegistered(ValueError):
    """A name is registered a second time without ``replace=True``."""


_ECHO_SCHEMA: dict[str, Any] = {"type": "object"}
_SET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"values": {"type": "object"}},
}


def _schema(arguments_schema: Mapping[str, Any]) -> dict[str, Any]:
    """A detached copy of a JSON Schema object; TypeError or NotCanonicalizable if not JSON."""
    if not isinstance(arguments_schema, Mapping):
        msg = "an arguments_schema is a JSON object"
        raise TypeError(msg)
    schema = {str(key): thaw(value) for key, value in arguments_schema.items()}
    canonical_json(schema)
    return schema


class ActionRegistry:
    """Handlers by action name, each with its descriptor metadata. Starts with the built-ins."""

    def __init__(self, *, builtins: bool = True) -> None:
        """Create a registry, with ``echo`` and ``set`` when ``builtins``."""
        self._handlers: dict[str, Callable[[ActionContext], Any]] = {}
        self._described: dict[str, RegisteredAction] = {}
        if builtins:
            for name, handler, schema in (
                ("echo", echo, _ECHO_SCHEMA),
                ("set", set_values, _SET_SCHEMA),
            ):
                self.register(
                    name,
                    handler,
                    side_effect=SideEffectClass.NONE,
                    arguments_schema=schema,
                    source=ActionSource.BUILTIN,
                )

    def register(
        self,
        name: str,
        handler: ActionHandler | Callable[[ActionContext], Any],
        *,
        fingerprint: str | None = None,
        capability_refs: Iterable[Capability | str] = (),
        side_effect: SideEffectClass | str = SideEffectClass.UNKNOWN,
        arguments_schema: Mapping[str, Any] | None = None,
        source: ActionSource = ActionSource.PLUGIN,
        replace: bool = False,
    ) -> RegisteredAction:
        """Make ``handler`` run actions called ``name``; return what is now listed for it.

        ``fingerprint`` defaults to ``"<name>/1"``. A name already registered raises
        ActionAlreadyRegistered unless ``replace``; an unknown capability or side-effect class
        raises ValueError, a handler that cannot be called TypeError.
        """
        if not isinstance(name, str) or not name.strip():
            msg = f"an action name is non-empty text, not {name!r}"
            raise ValueError(msg)
        if not callable(handler):
            msg = f"the handler of action {name!r} cannot be called"
            raise TypeError(msg)
        if name in self._handlers and not replace:
            msg = f"action {name!r} is already registered ({self._described[name].source})"
            raise ActionAlreadyRegistered(msg)
        described = RegisteredAction(
            name=name,
            fingerprint=fingerprint or f"{name}/1",
            capability_refs=tuple(Capability(ref) for ref in capability_refs),
            side_effect=SideEffectClass(side_effect),
            arguments_schema=None if arguments_schema is None else _schema(arguments_schema),
            source=ActionSource(source),
        )
        self._handlers[name] = handler
        self._described[name] = described
        return described

    def get(self, name: str) -> Callable[[ActionContext], Any] | None:
        """The handler for ``name``, or None."""
        return self._handlers.get(name)

    def names(self) -> Collection[str]:
        """Every registered name: a live view, so later registrations count."""
        return self._handlers.keys()

    def described(self, name: str) -> RegisteredAction | None:
        """What is listed for ``name``, or None."""
        return self._described.get(name)

    def listing(self, offered: Sequence[ActionDescriptorV1] = ()) -> ActionListResponse:
        """Every registered action, with the ``offered`` task actions, by name (code point).

        ``offered`` are the actions of task nodes (source ``task``), which workers serve.
        """
        tasks = [
            RegisteredAction(
                name=action.name,
                fingerprint=action.fingerprint,
                capability_refs=action.capability_refs,
                side_effect=action.side_effect,
                source=ActionSource.TASK,
            )
            for action in offered
        ]
        everything = [*self._described.values(), *tasks]
        return ActionListResponse(
            actions=sorted(everything, key=lambda a: (a.name, a.source, a.fingerprint))
        )


def undeclared(context: ActionContext, required: Iterable[Capability]) -> list[str]:
    """The ``required`` capabilities the node's descriptor does not declare, by name."""
    declared = set(context.descriptor.capability_refs)
    return [str(capability) for capability in required if capability not in declared]


def checked_result(name: str, returned: object) -> ActionResult:
    """A handler's answer as detached, canonical JSON; TypeError or NotCanonicalizable if not."""
    result = returned if isinstance(returned, ActionResult) else ActionResult(output=returned)  # type: ignore[arg-type]
    if not isinstance(result.output, Mapping):
        msg = f"action {name!r} returned {type(result.output).__name__}, not an object"
        raise TypeError(msg)
    if not all(callable(write) for write in result.in_attempt):
        msg = f"action {name!r} returned in_attempt writes that cannot be called"
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
        in_attempt=tuple(result.in_attempt),
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
