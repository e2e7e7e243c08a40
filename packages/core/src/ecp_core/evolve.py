"""A copy of a frozen attrs model with some fields changed, validated as ``attrs.evolve`` does.

``attrs.evolve`` reads the old instance's fields one by one in Python (its field list, each
field's ``init`` and alias, a ``getattr`` each) before it calls the class. A run is evolved about
twenty times on its way through an attempt, and that loop was the largest single cost of the
client's CPU per run (ADR 0101). :func:`evolve` reads the fields with one prepared
``operator.attrgetter`` and calls the class the same way, so every validator and
``__attrs_post_init__`` still runs on the copy: only the reading is faster.
"""

from __future__ import annotations

import operator
from typing import Any, TypeVar

import attrs

T = TypeVar("T")

_PLANS: dict[type, tuple[tuple[str, ...], Any]] = {}
"""Per model class: the ``__init__`` names of its fields and a getter of their values. Bounded by
the number of model classes."""


def _plan(cls: type) -> tuple[tuple[str, ...], Any]:
    fields = [field for field in attrs.fields(cls) if field.init]
    aliases = tuple(field.alias or field.name for field in fields)
    names = [field.name for field in fields]
    if len(names) == 1:  # attrgetter of one name answers the value, not a tuple
        single = operator.attrgetter(names[0])
        getter: Any = lambda instance: (single(instance),)  # noqa: E731
    elif names:
        getter = operator.attrgetter(*names)
    else:
        getter = lambda _: ()  # noqa: E731
    _PLANS[cls] = (aliases, getter)
    return aliases, getter


def evolve(instance: T, **changes: Any) -> T:  # noqa: ANN401 - the fields' own types
    """``instance``'s class built again from its fields with ``changes`` (``attrs.evolve``)."""
    cls = type(instance)
    aliases, getter = _PLANS.get(cls) or _plan(cls)
    values = dict(zip(aliases, getter(instance), strict=True))
    values.update(changes)
    return cls(**values)
