"""What one node attempt produced, before the audit writer seals it into the run's chain."""

from typing import Any

import attrs

from ecp_core.types import AttemptStatus


@attrs.frozen(kw_only=True)
class AttemptRecord:
    """What one node attempt produced, before it is sealed into the chain."""

    node_id: str
    status: AttemptStatus
    input_snapshot: Any = None
    output_snapshot: Any = None
    execution_metadata: Any = None
    error: Any = None
    stdout: str | None = None
    stderr: str | None = None
    tool_calls: Any = None
    memory_interactions: Any = None
    validation_results: Any = None


__all__ = ["AttemptRecord"]
