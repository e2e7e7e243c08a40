"""Edge conditions in CEL (Common Expression Language), never Python ``eval``.

``branch_rule`` ``expression`` evaluates ``expression`` once with ``state`` bound to the run
state. ``all`` and ``any`` evaluate it once per entry of ``operand_refs``, each time with
``operand`` bound to the value at that dotted path of the state (``null`` when absent) and
``state`` as well; the edge is taken when all (or any) of those evaluations are true. ``all`` over
no operands is true and ``any`` over none is false. Every evaluation must yield a boolean.

The CEL binding is imported when the first expression is compiled, not with this module: its
package also loads its own command line (typer, rich, prompt_toolkit, pydantic), which a process
that never compiles a condition should not pay for (ADR 0052).
"""

import functools
from collections.abc import Mapping
from typing import Any

from ecp_core.errors import EcpError
from ecp_core.graphs.definition import Condition
from ecp_core.graphs.paths import get_path


class ConditionError(EcpError):
    """A condition failed to compile or evaluate, or yielded a non-boolean."""

    code = "condition_error"


@functools.lru_cache(maxsize=4096)
def compile_expression(expression: str) -> Any:  # noqa: ANN401 - the CEL program type is untyped
    """Parse and check ``expression`` once; raise ConditionError on a syntax error."""
    import cel  # noqa: PLC0415 - deferred to the first condition (ADR 0052)

    try:
        return cel.compile(expression)
    except (ValueError, RuntimeError) as exc:
        raise ConditionError(f"invalid CEL expression: {exc}") from exc


def _evaluate_one(expression: str, variables: Mapping[str, Any]) -> bool:
    program = compile_expression(expression)
    try:
        result = program.execute(dict(variables))
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ConditionError(f"condition {expression!r} failed: {detail}") from exc
    if not isinstance(result, bool):
        raise ConditionError(
            f"condition {expression!r} yielded {type(result).__name__}, not a boolean"
        )
    return result


def condition_holds(condition: Condition | None, state: Mapping[str, Any]) -> bool:
    """Evaluate ``condition`` against the run ``state`` (no condition: the edge is always taken)."""
    if condition is None:
        return True
    if condition.branch_rule == "expression":
        return _evaluate_one(condition.expression, {"state": state})
    results = (
        _evaluate_one(condition.expression, {"state": state, "operand": get_path(state, ref)})
        for ref in condition.operand_refs
    )
    return all(results) if condition.branch_rule == "all" else any(results)
