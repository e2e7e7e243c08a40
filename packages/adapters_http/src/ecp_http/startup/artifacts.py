"""The filesystem ArtifactStore: artifacts as files under one directory, keyed by relative path."""

import pathlib
from collections.abc import Sequence


class FilesystemArtifacts:
    """Artifacts under ``root``; keys are relative paths and never leave the root."""

    def __init__(self, root: pathlib.Path) -> None:
        """Use ``root`` (created on demand)."""
        self.root = root.resolve()

    def _path(self, key: str) -> pathlib.Path | None:
        path = (self.root / key).resolve()
        return path if path.is_relative_to(self.root) and path != self.root else None

    def put(self, key: str, data: bytes) -> None:
        """Write an artifact."""
        path = self._path(key)
        if path is None:
            msg = f"artifact key {key!r} leaves the artifact directory"
            raise ValueError(msg)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def delete_prefix(self, prefix: str) -> int:
        """Delete every file whose key starts with ``prefix``."""
        if not self.root.exists():
            return 0
        doomed = [
            p
            for p in self.root.rglob("*")
            if p.is_file() and p.relative_to(self.root).as_posix().startswith(prefix)
        ]
        for path in doomed:
            path.unlink(missing_ok=True)
        return len(doomed)

    def delete(self, keys: Sequence[str]) -> int:
        """Delete these artifacts where they exist."""
        removed = 0
        for key in dict.fromkeys(keys):
            path = self._path(key)
            if path is not None and path.is_file():
                path.unlink()
                removed += 1
        return removed
