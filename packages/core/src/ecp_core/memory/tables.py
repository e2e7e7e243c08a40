"""The in-memory tables every memory repository works on, and the repositories' base."""

import copy
import functools
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_ABSENT = object()


class Tables:
    """Named dicts plus an undo log of the writes made through :meth:`put`.

    Values are copied on the way in and out, so callers never share the stored objects.
    """

    def __init__(self) -> None:
        """Start empty."""
        self.data: dict[str, dict[Any, Any]] = {}
        self.undo: list[Callable[[], None]] | None = None

    def table(self, name: str) -> dict[Any, Any]:
        """The dict called ``name`` (created on first use)."""
        return self.data.setdefault(name, {})

    def put(self, name: str, key: Hashable, value: Any) -> None:  # noqa: ANN401
        """Write ``value`` at ``key``, remembering how to undo it."""
        table = self.table(name)
        value = copy.deepcopy(value)
        previous = table.get(key, _ABSENT)
        if self.undo is not None:
            if previous is _ABSENT:
                self.undo.append(lambda: table.pop(key, None))
            else:
                self.undo.append(lambda: table.__setitem__(key, previous))
        table[key] = value

    def remove(self, name: str, key: Hashable) -> None:
        """Remove the value at ``key`` (if any), remembering how to undo it."""
        table = self.table(name)
        if key not in table:
            return
        previous = table.pop(key)
        if self.undo is not None:
            self.undo.append(lambda: table.__setitem__(key, previous))

    def append(self, name: str, key: Hashable, value: Any) -> None:  # noqa: ANN401
        """Append ``value`` to the list at ``key``, remembering how to undo it."""
        table = self.table(name)
        items = table.setdefault(key, [])
        items.append(copy.deepcopy(value))
        if self.undo is not None:
            self.undo.append(items.pop)


def detached(read: Callable[P, R]) -> Callable[P, R]:
    """Return a deep copy of what ``read`` returns, so callers never share stored objects."""

    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return copy.deepcopy(read(*args, **kwargs))

    return wrapper


class Repository:
    """Base of the memory repositories: they all read and write one :class:`Tables`."""

    def __init__(self, tables: Tables) -> None:
        """Work on ``tables`` (the store's, shared by every unit of work)."""
        self._t = tables
