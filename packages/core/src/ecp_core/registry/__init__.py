"""The graph registry: registering graph versions, deploying them, setting their policies."""

from ecp_core.registry.service import GraphRegistry, require_deployment, require_graph

__all__ = ["GraphRegistry", "require_deployment", "require_graph"]
