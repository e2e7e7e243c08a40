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
import threading
import time
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
    quiet: threading.Event | None = None,
    appended: threading.Event | None = None,
    quiet_seconds: float = 30.0,
) -> Dispatcher | None:
    """The log thread (not started), or None when the log is off (no signer).

    ``witnesses`` (URL, verifier key) cosign each new checkpoint. While ``quiet`` is set (the
    listener is connected), a pass reads the database only when this process appended audit
    records since the last one (``appended``, set after such commits) or ``quiet_seconds``
    passed: records another process appended are its own log thread's (ADR 0099).
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
        sweeps=[
            (
                LOG_SWEEP,
                when_appended(
                    log_sweep(ecp.log_integrator, metrics, witnessing),
                    quiet,
                    appended,
                    quiet_seconds,
                ),
                seconds,
            )
        ],
        outage=outage,
    )


def when_appended(
    sweep: Callable[[], float | None],
    quiet: threading.Event | None,
    appended: threading.Event | None,
    quiet_seconds: float,
) -> Callable[[], float | None]:
    """``sweep``, skipped while ``quiet`` when nothing was ``appended`` within ``quiet_seconds``."""
    if quiet is None or appended is None:
        return sweep
    safety = [0.0]  # when a pass reads the database whatever was appended

    def integrate_when_appended() -> float | None:
        now = time.monotonic()
        if quiet.is_set() and not appended.is_set() and now < safety[0]:
            return None
        appended.clear()  # before reading: what commits meanwhile is read by the next pass
        safety[0] = now + quiet_seconds
        return sweep()

    return integrate_when_appended


__all__ = ["LOG_SWEEP", "log_sweep", "log_thread", "when_appended"]
