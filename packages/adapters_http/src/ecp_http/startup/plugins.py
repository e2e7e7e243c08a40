"""Action plug-ins: the ``ecp.actions`` entry points, then ``ECP_ACTION_MODULES``.

Each plug-in is a callable ``register(registry: ActionRegistry) -> None``. Entry points load in
the order of their names (then distributions), the modules in the order the setting lists them.
A plug-in that cannot be imported, is not callable, or raises while registering (a name already
taken included) refuses start-up with one line naming it (ADR 0027).
"""

import importlib
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import attrs

from ecp_core.runs.run.actions import ActionRegistry
from ecp_http.startup.exits import RefusedToStart

ENTRY_POINT_GROUP = "ecp.actions"
"""The entry-point group whose members register actions."""


class PluginFailed(RefusedToStart):
    """An action plug-in could not be loaded or refused to register; one line names it.

    Start-up stops on it (``ecp`` prints the line and exits 2), like ``StartupRefused``.
    """


@attrs.frozen
class Plugin:
    """One plug-in to load: how it is named to an operator, and how to find its callable."""

    label: str
    """``entry point 'name' (distribution)`` or ``ECP_ACTION_MODULES 'module:function'``."""
    load: Callable[[], Any]


def _entry_point_label(point: EntryPoint) -> str:
    where = f"{point.dist.name} " if point.dist is not None else ""
    return f"entry point {point.name!r} ({where}{point.value})"


def _import_target(target: str) -> Callable[[], Any]:
    """Load ``module:attribute.path`` when called."""

    def load() -> Any:  # noqa: ANN401 - whatever the module holds; checked callable below
        module_name, _, attribute = target.partition(":")
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
        return found

    return load


def discover(action_modules: Sequence[str] = ()) -> Iterator[Plugin]:
    """The installed ``ecp.actions`` entry points, then each ``module:function`` given."""
    points = sorted(
        entry_points(group=ENTRY_POINT_GROUP),
        key=lambda p: (p.name, p.dist.name if p.dist else "", p.value),
    )
    for point in points:
        yield Plugin(_entry_point_label(point), point.load)
    for target in action_modules:
        yield Plugin(f"ECP_ACTION_MODULES {target!r}", _import_target(target))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load_plugins(registry: ActionRegistry, action_modules: Sequence[str] = ()) -> None:
    """Let every plug-in register its actions; PluginFailed names the first that fails."""
    for plugin in discover(action_modules):
        try:
            register = plugin.load()
            if not callable(register):
                msg = f"{type(register).__name__} is not callable"
                raise TypeError(msg)  # noqa: TRY301 - reported like any other failure below
            register(registry)
        except Exception as exc:
            reason = _first_line(exc)
            raise PluginFailed(f"action plug-in {plugin.label} failed: {reason}") from exc
