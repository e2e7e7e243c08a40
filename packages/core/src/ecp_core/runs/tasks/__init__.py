"""External tasks: work a task node offers to workers in any language.

The model and its pure rules, what a completion or a failure does to the run
(:mod:`.steps`), and the workers' use cases (:mod:`.service`); storage is
:mod:`ecp_core.ports.tasks` (ADR 0030).
"""

from ecp_core.runs.tasks.model import Task, TaskStatus, new_lock_token

__all__ = ["Task", "TaskStatus", "new_lock_token"]
