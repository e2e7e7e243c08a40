"""The log thread: appends committed audit records to their tenants' transparency logs (ADR 0086).

A thread of its own, so integrating a large batch never delays run dispatch or timers. Every
``ECP_LOG_CHECKPOINT_SECONDS`` it takes each tenant's pending leaves, appends them and signs a
checkpoint (logged as ``log checkpoint signed`` with the tenant and size, and counted); when a
tenant had more than a batch waiting it goes on at once. Several server processes share the
work: a tenant's log another process is appending to is skipped.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from ecp_core.service import Ecp
from ecp_core.transparency.integrator import LogIntegrator
from ecp_http.background.dispatch import Dispatcher, Outage

if TYPE_CHECKING:
    from ecp_http.server.observability.metrics import Metrics

LOG_SWEEP = "integrate_transparency_log"
"""The name of the log thread's one sweep."""


def log_sweep(
    integrator: LogIntegrator, metrics: "Metrics | None" = None
) -> Callable[[], float | None]:
    """Integrate every tenant's pending leaves; 0 (go on at once) when a batch was full."""

    def integrate_log() -> float | None:
        done = integrator.integrate()
        appended = sum(tenant.appended for tenant in done)
        if metrics is not None and appended:
            metrics.log_leaves.inc(appended)
            metrics.log_checkpoints.inc(sum(1 for tenant in done if tenant.appended))
        return 0.0 if any(t.appended >= integrator.batch for t in done) else None

    return integrate_log


def log_thread(
    ecp: Ecp, seconds: float, *, outage: Outage, metrics: "Metrics | None" = None
) -> Dispatcher | None:
    """The log thread (not started), or None when the log is off (no signer)."""
    if ecp.log_integrator is None:
        return None
    return Dispatcher(
        ecp.runs,
        workers=0,
        poll_seconds=seconds,
        sweeps=[(LOG_SWEEP, log_sweep(ecp.log_integrator, metrics), seconds)],
        outage=outage,
    )


__all__ = ["LOG_SWEEP", "log_sweep", "log_thread"]
