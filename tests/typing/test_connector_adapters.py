"""The connector adapters are their ports: a drift between them fails type-checking."""

from ecp_core.memory.connectors import MemoryConnectorCosts, MemoryConnectors
from ecp_core.ports.connectors import ConnectorCostRepository, ConnectorProbe, ConnectorRepository
from ecp_http.outbound.connector_backends import HttpProbe
from ecp_postgres.connectors import PostgresConnectorCosts, PostgresConnectors


def memory_connectors(x: MemoryConnectors) -> ConnectorRepository:
    """MemoryConnectors is a ConnectorRepository."""
    return x


def postgres_connectors(x: PostgresConnectors) -> ConnectorRepository:
    """PostgresConnectors is a ConnectorRepository."""
    return x


def memory_connector_costs(x: MemoryConnectorCosts) -> ConnectorCostRepository:
    """MemoryConnectorCosts is a ConnectorCostRepository."""
    return x


def postgres_connector_costs(x: PostgresConnectorCosts) -> ConnectorCostRepository:
    """PostgresConnectorCosts is a ConnectorCostRepository."""
    return x


def http_probe(x: HttpProbe) -> ConnectorProbe:
    """HttpProbe is the server's ConnectorProbe."""
    return x
