"""The backtest adapters are their port: a drift between them fails type-checking."""

from ecp_core.memory.backtests import MemoryBacktests
from ecp_core.ports.backtests import BacktestRepository
from ecp_postgres.backtests import PostgresBacktests


def memory_backtests(x: MemoryBacktests) -> BacktestRepository:
    """MemoryBacktests is a BacktestRepository."""
    return x


def postgres_backtests(x: PostgresBacktests) -> BacktestRepository:
    """PostgresBacktests is a BacktestRepository."""
    return x
