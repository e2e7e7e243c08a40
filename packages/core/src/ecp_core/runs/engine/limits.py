"""Concurrency limits (ADR 0079): how many runs of a deployment, or of a tenant, run at once.

A limit gates the claim (``RunRepository.claim_runnable``): a run that holds no slot is admitted
only while its tenant and its deployment are under their limits; the rest stay queued in their
order. Setting a limit never stops a run that holds a slot: lowered below what is held, the
count has to fall under it before the next admission.
"""

import logging
from collections.abc import Callable

from ecp_core.deployments.model import Deployment, LimitsRequest, TenantLimits
from ecp_core.errors import NotFound
from ecp_core.identity import ActorIdentity
from ecp_core.ports.runs import RunsUnit

log = logging.getLogger("ecp_core.runs")


class RunLimits:
    """Sets and reads the concurrency limits of deployments and tenants."""

    def __init__(self, uow: Callable[[], RunsUnit]) -> None:
        """Work in units of ``uow``."""
        self._uow = uow

    def set_deployment_limit(
        self, actor: ActorIdentity, deployment_ref: str, request: LimitsRequest
    ) -> Deployment:
        """Set (None: lift) the deployment's limit; the deployment after. NotFound if unknown."""
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            deployment = uow.deployments.set_limit(
                tenant_id, deployment_ref, request.max_concurrent_runs
            )
            if deployment is None:
                raise NotFound(f"deployment {deployment_ref} not found")
            uow.commit()
        log.info(
            "deployment limit set",
            extra={
                "deployment_ref": deployment_ref,
                "tenant_id": tenant_id,
                "actor": actor.subject,
                "max_concurrent_runs": request.max_concurrent_runs,
            },
        )
        return deployment

    def set_tenant_limit(self, actor: ActorIdentity, request: LimitsRequest) -> TenantLimits:
        """Set (None: lift) the tenant's limit over all its deployments; the limits after."""
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            limits = uow.deployments.set_tenant_limit(tenant_id, request.max_concurrent_runs)
            uow.commit()
        log.info(
            "tenant limit set",
            extra={
                "tenant_id": tenant_id,
                "actor": actor.subject,
                "max_concurrent_runs": request.max_concurrent_runs,
            },
        )
        return limits

    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        """The tenant's own limits (none set: no limit)."""
        with self._uow() as uow:
            return uow.deployments.tenant_limits(tenant_id)


__all__ = ["RunLimits"]
