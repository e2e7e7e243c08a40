"""In-memory implementations of every storage port: real code for embedding and tests.

One :class:`MemoryStore` holds the data; each :class:`MemoryUnitOfWork` takes the store's lock
for its whole life (serializable isolation) and undoes its writes unless committed.
"""

from ecp_core.memory.store import MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryStore", "MemoryUnitOfWork"]
