"""The log thread: appends committed audit records to their tenants' transparency logs (ADR 0086).

A thread of its own, so integrating a large batch never delays run dispatch or timers. Every
``ECP_LOG_CHECKPOINT_SECONDS`` it takes each tenant's pending leaves, appends them and signs a
checkpoint (logged as ``log checkpoint signed`` with the tenant and size, and counted); when a
tenant had more than a batch waiting it goes on at once. Several server processes share the
work: a tenant's log another process is appending to is skipped. With ``ECP_LOG_WITNESSES`` set,
each new checkpoint is then sent to the witnesses, and their cosignatures are published with it;
a refusal is logged (``witness refused checkpoint``) and counted.
"""

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ecp_core.service import Ecp
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.notes import NoteKey
from ecp_core.transparency.witnessing import WitnessEndpoint, Witnessing
from ecp_http.background.dispatch import Dispatcher, Outage
from ecp_http.outbound.witness_client import HttpxWitnessClient

if TYPE_CHECKING:
    from ecp_http.server.observability.metrics import Metrics

log = logging.getLogger("ecp_http.transparency")

LOG_SWEEP = "integrate_transparency_log"
"""The name of the log thread's one sweep."""


def log_sweep(
    integrator: LogIntegrator,
    metrics: "Metrics | None" = None,
    witnessing: Witnessing | None = None,
) -> Callable[[], float | None]:
    """Integrate every tenant's pending leaves, then have each new checkpoint cosigned.

    Answers 0 (go on at once) when a batch was full.
    """

    def integrate_log() -> float | None:
        done = integrator.integrate()
        appended = sum(tenant.appended for tenant in done)
        if metrics is not None and appended:
            metrics.log_leaves.inc(appended)
            metrics.log_checkpoints.inc(sum(1 for tenant in done if tenant.appended))
        signed = integrator.drain_signed()  # by this sweep, or by a bundle on the request path
        if witnessing is not None:
            for tenant_id in signed:
                _cosign(witnessing, tenant_id, metrics)
        return 0.0 if any(t.appended >= integrator.batch for t in done) else None

    return integrate_log


def _cosign(witnessing: Witnessing, tenant_id: str, metrics: "Metrics | None") -> None:
    """Gather the witnesses' cosignatures of the tenant's newest checkpoint; log refusals."""
    cosigned, refusals = witnessing.cosign(tenant_id)
    for refusal in refusals:
        log.warning(
            "witness refused checkpoint",
            extra={
                "tenant_id": tenant_id,
                "witness": refusal.witness,
                "status": refusal.status,
                "reason": refusal.reason,
            },
        )
        if metrics is not None:
            metrics.log_witness_refusals.labels(refusal.witness).inc()
    if metrics is not None and cosigned:
        metrics.log_cosignatures.inc(len(cosigned))


def log_thread(
    ecp: Ecp,
    seconds: float,
    *,
    outage: Outage,
    metrics: "Metrics | None" = None,
    witnesses: Sequence[tuple[str, str]] = (),
) -> Dispatcher | None:
    """The log thread (not started), or None when the log is off (no signer).

    ``witnesses`` (URL, verifier key) cosign each new checkpoint.
    """
    if ecp.log_integrator is None or ecp.transparency is None:
        return None
    endpoints = [WitnessEndpoint(url, NoteKey.from_vkey(vkey)) for url, vkey in witnesses]
    witnessing = (
        Witnessing(ecp.transparency, endpoints, HttpxWitnessClient()) if endpoints else None
    )
    return Dispatcher(
        ecp.runs,
        workers=0,
        poll_seconds=seconds,
        sweeps=[(LOG_SWEEP, log_sweep(ecp.log_integrator, metrics, witnessing), seconds)],
        outage=outage,
    )


__all__ = ["LOG_SWEEP", "log_sweep", "log_thread"]
