"""Secrets that actions name by reference: ``ECP_SECRET_<NAME>`` settings, or files in a directory.

A graph names a secret, never holds it (ADR 0028). The values come from the settings (read once from
the environment by the composition root) or, when no such setting is given, from the file
``<ECP_SECRETS_DIR>/<NAME>``, read at each use so that a rotated file takes effect at once. Error
messages name the secret and never show its value.
"""

import pathlib
import re
from collections.abc import Iterable, Mapping

from ecp_http.config.table.actions import SECRET, SECRETS_DIR

SECRET_NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"  # noqa: S105 - a pattern
"""A secret name: letters, digits, ``_``, ``-`` and ``.``, not starting with ``.`` or ``-``.

No name can be a path (``/``) or climb out of the directory (``..`` cannot start a name).
"""

MAX_SECRET_FILE_BYTES = 64 * 1024
"""A secret file larger than this is refused rather than read."""

_NAME = re.compile(SECRET_NAME_PATTERN)
REDACTED = "[redacted]"
"""What a secret value is replaced with wherever it would otherwise be written."""


class SecretUnavailable(Exception):
    """A named secret is not set or cannot be read; the message names it, never its value."""


class ActionSecrets:
    """Looks secrets up by name: the ``ECP_SECRET_<NAME>`` settings first, then the directory."""

    def __init__(self, values: Mapping[str, str], directory: pathlib.Path | None) -> None:
        """``values`` by name (``ECP_SECRET_`` stripped); ``directory`` holds one file per name."""
        self._values = dict(values)
        self._directory = directory

    def value(self, name: str) -> str:
        """The secret called ``name``; SecretUnavailable when it is not set or unreadable.

        A file's trailing line break is not part of the secret.
        """
        if _NAME.fullmatch(name) is None:
            raise SecretUnavailable(f"{name!r} is not a secret name")
        value = self._values.get(name)
        if value:
            return value
        where = f"{SECRET.prefix}{name} is not set"
        if self._directory is None:
            raise SecretUnavailable(f"the secret {name!r} is missing: {where}")
        path = self._directory / name
        try:
            if path.stat().st_size > MAX_SECRET_FILE_BYTES:
                raise SecretUnavailable(
                    f"the secret file for {name!r} is over {MAX_SECRET_FILE_BYTES} bytes"
                )
            text = path.read_bytes().decode("utf-8").rstrip("\r\n")
        except FileNotFoundError:
            raise SecretUnavailable(
                f"the secret {name!r} is missing: {where} and {SECRETS_DIR.name} has no file {name}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            # The reason only (a decode error would quote the bytes it could not read).
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8"
            raise SecretUnavailable(
                f"the secret file for {name!r} cannot be read: {reason}"
            ) from None
        if not text:
            raise SecretUnavailable(f"the secret {name!r} is missing: its file is empty")
        return text


def redacted(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret value replaced by :data:`REDACTED`."""
    for secret in sorted(set(secrets), key=len, reverse=True):  # longest first: no partial leaks
        if secret:
            text = text.replace(secret, REDACTED)
    return text
