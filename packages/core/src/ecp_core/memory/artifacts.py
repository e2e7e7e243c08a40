"""An in-memory ArtifactStore."""

import threading
from collections.abc import Sequence


class MemoryArtifacts:
    """Artifacts as bytes by key."""

    def __init__(self) -> None:
        """Start empty."""
        self.items: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, key: str, data: bytes) -> None:
        """Store an artifact."""
        with self._lock:
            self.items[key] = data

    def delete_prefix(self, prefix: str) -> int:
        """Delete every artifact under ``prefix``."""
        with self._lock:
            doomed = [key for key in self.items if key.startswith(prefix)]
            for key in doomed:
                del self.items[key]
        return len(doomed)

    def delete(self, keys: Sequence[str]) -> int:
        """Delete these artifacts where they exist."""
        with self._lock:
            found = [key for key in dict.fromkeys(keys) if key in self.items]
            for key in found:
                del self.items[key]
        return len(found)
