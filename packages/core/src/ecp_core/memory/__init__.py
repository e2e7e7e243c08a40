"""In-memory implementations of every storage port: real code for embedding and tests.

One :class:`MemoryStore` holds the data; each :class:`MemoryUnitOfWork` takes the store's lock
for its whole life (serializable isolation) and undoes its writes unless committed. The modules
mirror ``ecp_postgres`` one per storage area (``graphs``, ``runs``, ``evidence``, ``debugger``,
...); ``tables`` and ``store`` are this package's own plumbing, and ``artifacts`` an
``ArtifactStore`` kept in memory.
"""

from ecp_core.memory.store import MemoryEvidence, MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryEvidence", "MemoryStore", "MemoryUnitOfWork"]
