"""External tasks: work a task node offers to workers in any language (CONTRACT "Running real work").

The model and its pure rules; storage is :mod:`ecp_core.ports.tasks` (ADR 0030).
"""

from ecp_core.tasks.model import Task, TaskStatus, new_lock_token

__all__ = ["Task", "TaskStatus", "new_lock_token"]
