"""What the graph registry (registering, deploying, setting policies) needs of storage."""

from typing import Protocol

from ecp_core.ports.contracts import WithContracts
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.policies import WithPolicies
from ecp_core.ports.unit import Transaction


class RegistryUnit(Transaction, WithGraphs, WithDeployments, WithPolicies, WithContracts, Protocol):
    """Graphs, deployments, policies and the contracts graphs name, in one transaction."""


__all__ = ["RegistryUnit"]
