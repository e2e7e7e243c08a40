"""Development secrets: generated on first start and kept under the data directory (mode 0600).

``ecp serve`` makes them (:func:`with_development_secrets`); ``ecp token`` only reads the one a
server made (:func:`development_token`), so that its tokens are the ones that server accepts.
"""

import base64
import os
import pathlib
import secrets
from collections.abc import Callable

import attrs

from ecp_http.config.settings import Settings, SettingsError
from ecp_http.config.table.serving import AUDIT_SIGNING_KEY, JWT_SECRET
from ecp_http.server.auth import mint_token
from ecp_http.startup.exits import CommandRefused

JWT_SECRET_FILE = "jwt-secret"  # noqa: S105 - a file name, not a secret
"""The development JWT secret's file under the data directory."""


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
            (JWT_SECRET.name, settings.jwt_secret),
            (AUDIT_SIGNING_KEY.name, settings.audit_signing_key),
        )
        if not value
    ]
    if not missing:
        return settings, []
    if settings.hosted.enabled:
        raise SettingsError(f"hosted mode needs real secrets: set {', '.join(missing)}")
    notes: list[str] = []
    jwt_secret, signing_key = settings.jwt_secret, settings.audit_signing_key
    if not jwt_secret:
        path = settings.data_dir / JWT_SECRET_FILE
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


def development_token(
    settings: Settings,
    *,
    tenant: str,
    roles: list[str],
    ttl_seconds: int,
    subject: str,
    data_dir: pathlib.Path | None = None,
) -> str:
    """A JWT signed with the secret a server with these settings uses; never a new secret.

    That is ``ECP_JWT_SECRET`` when set, else the development secret ``ecp serve`` keeps in
    ``data_dir`` (the settings' ``ECP_DATA_DIR`` by default). Refused when the service is hosted (SettingsError), and when neither exists
    (CommandRefused): a secret made here would sign tokens no server accepts.
    """
    if settings.hosted.enabled:
        raise SettingsError("ecp token is disabled when the service is configured as hosted")
    data_dir = settings.data_dir if data_dir is None else data_dir
    secret = settings.jwt_secret
    if not secret:
        path = data_dir / JWT_SECRET_FILE
        try:
            secret = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            secret = ""
        except OSError as exc:
            raise SettingsError(f"cannot read {path.resolve()}: {exc.strerror}") from None
    if not secret:
        raise CommandRefused(
            f"no development secret in {data_dir.resolve()}; run `ecp serve` there first "
            f"or set {JWT_SECRET.name}"
        )
    return mint_token(secret, tenant=tenant, roles=roles, ttl_seconds=ttl_seconds, subject=subject)
