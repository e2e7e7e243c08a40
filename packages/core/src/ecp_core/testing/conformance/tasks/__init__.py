"""External tasks on every store: offers, claims under expiring locks, completions, failures.

The rules (ADR 0030, :mod:`ecp_core.runs.tasks.rules`): a claim takes a tenant's waiting or
lock-expired tasks of the asked topics, oldest first, each under a new lock token; only the
current token heartbeats, completes or fails; a completion is applied once, and repeating it with
the same token is a no-op; a token whose task another claim took gets ``lock_lost``. A lock that
ran out is released (waiting again, or failed at the last attempt) so that its attempt is
recorded once (ADR 0031).
"""

from ecp_core.testing.conformance.tasks.expiry import TaskExpiryConformance
from ecp_core.testing.conformance.tasks.properties import TaskQueueProperties
from ecp_core.testing.conformance.tasks.repository import TaskRepositoryConformance

__all__ = ["TaskExpiryConformance", "TaskQueueProperties", "TaskRepositoryConformance"]
