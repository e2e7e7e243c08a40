"""Development secrets: generated on first start and kept under the data directory (mode 0600)."""

import base64
import os
import pathlib
import secrets
from collections.abc import Callable

import attrs

from ecp_http.settings import Settings, SettingsError


def _kept(path: pathlib.Path, make: Callable[[], str]) -> tuple[str, bool]:
    if path.exists():
        return path.read_text().strip(), False
    path.parent.mkdir(parents=True, exist_ok=True)
    value = make()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(value + "\n")
    return value, True


def with_development_secrets(settings: Settings) -> tuple[Settings, list[str]]:
    """Fill in a missing JWT secret and audit signing key from files in ``data_dir``.

    Returns the settings and a line for each secret generated now. Hosted mode refuses instead.
    """
    missing = [
        name
        for name, value in (
            ("ECP_JWT_SECRET", settings.jwt_secret),
            ("ECP_AUDIT_SIGNING_KEY", settings.audit_signing_key),
        )
        if not value
    ]
    if not missing:
        return settings, []
    if settings.hosted:
        raise SettingsError(f"hosted mode needs real secrets: set {', '.join(missing)}")
    notes: list[str] = []
    jwt_secret, signing_key = settings.jwt_secret, settings.audit_signing_key
    if not jwt_secret:
        path = settings.data_dir / "jwt-secret"
        jwt_secret, made = _kept(path, lambda: secrets.token_urlsafe(48))
        notes.append(f"{'generated' if made else 'using'} a development JWT secret in {path}")
    if not signing_key:
        path = settings.data_dir / "audit-signing-key"
        signing_key, made = _kept(
            path, lambda: base64.b64encode(secrets.token_bytes(32)).decode("ascii")
        )
        notes.append(
            f"{'generated' if made else 'using'} a development audit signing key in {path}"
        )
    return attrs.evolve(settings, jwt_secret=jwt_secret, audit_signing_key=signing_key), notes
