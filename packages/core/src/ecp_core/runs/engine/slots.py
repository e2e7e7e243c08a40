"""Concurrency slots (ADR 0079): whether one more run of a deployment may run now.

A run *holds a slot* from the claim that admits it until it waits, is paused or ends. A tenant
and each of its deployments may cap how many of their runs hold one at once
(``max_concurrent_runs``); a run that holds none is admitted only while both are under their
caps. A run that holds one keeps it between its attempts, so its own limit never stops it.
"""

from collections import Counter
from collections.abc import Iterable, Mapping


class Slots:
    """A tenant's limits and the slots its runs hold, by deployment."""

    def __init__(
        self, *, tenant: int | None, deployments: Mapping[str, int], held: Iterable[str]
    ) -> None:
        """Hold the tenant's cap, the deployments' caps and who holds slots.

        ``tenant`` is None without a cap; ``held`` names the deployment of each run holding one.
        """
        self.tenant = tenant
        self.deployments = dict(deployments)
        self.held = Counter(held)

    def free(self, deployment_ref: str) -> bool:
        """Whether a run of ``deployment_ref`` that holds no slot may take one now."""
        if self.tenant is not None and self.held.total() >= self.tenant:
            return False
        cap = self.deployments.get(deployment_ref)
        return cap is None or self.held[deployment_ref] < cap


__all__ = ["Slots"]
