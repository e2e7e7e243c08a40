"""The catalog: registering graph versions, deploying them, setting their policies."""

from ecp_core.catalog.service import GraphCatalog, require_deployment, require_graph

__all__ = ["GraphCatalog", "require_deployment", "require_graph"]
