"""What moves runs.

The stepper that decides each move, the lifecycle that applies it, dispatch, and the run's own
use cases (:class:`~ecp_core.runs.engine.service.RunService`).
"""
