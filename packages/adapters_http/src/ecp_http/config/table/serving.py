"""Serving and the database: where the data lives, the address, the processes, the secrets.

The server's own secrets (bearer tokens, audit signing), and whether it is a hosted offer.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

import pathlib

from ecp_http.config.values import Setting, at_least, flag, number, path, text, whole

JWT_SECRET_MIN = 32
"""The fewest characters ``ECP_JWT_SECRET`` may have (HS256 wants 256 bits)."""

DATABASE_URL: Setting[str | None] = Setting(
    name="ECP_DATABASE_URL",
    parse=text,
    default=None,
    description="a `postgresql://` URL; unset starts an embedded PostgreSQL in `$ECP_DATA_DIR/pg`",
)

DATABASE_POOL_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_DATABASE_POOL_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=5.0,
    description=(
        "how long a request or worker waits for a database connection before `503 "
        "database_unavailable` (ADR 0021)"
    ),
    shown_default="`5`",
)

DATA_DIR: Setting[pathlib.Path] = Setting(
    name="ECP_DATA_DIR",
    parse=path,
    default=pathlib.Path(".ecp"),
    description="embedded database, development secrets, artifacts",
    shown_default="`./.ecp`",
)

HOST: Setting[str] = Setting(
    name="ECP_HOST",
    parse=text,
    default="127.0.0.1",
    description="the address the server listens on (`ecp serve --host` overrides)",
    shown_default="`127.0.0.1`",
)

PORT: Setting[int] = Setting(
    name="ECP_PORT",
    parse=whole(1, maximum=65535),
    default=8000,
    description="the port the server listens on, 0 for any free one (`ecp serve --port` overrides)",
    shown_default="`8000`",
)

JWT_SECRET: Setting[str | None] = Setting(
    name="ECP_JWT_SECRET",
    parse=at_least(JWT_SECRET_MIN),
    default=None,
    description=(
        "HS256 secret for bearer tokens, at least 32 characters; generated into "
        "`$ECP_DATA_DIR/jwt-secret` (0600) when unset, refused unset when hosted"
    ),
    shown_default="generated",
)

AUDIT_SIGNING_KEY: Setting[str | None] = Setting(
    name="ECP_AUDIT_SIGNING_KEY",
    parse=text,
    default=None,
    description=(
        "base64 Ed25519 seed (32 bytes) that signs audit records; generated into "
        "`$ECP_DATA_DIR/audit-signing-key` (0600) when unset, refused unset when hosted"
    ),
    shown_default="generated",
)

AUDIT_SIGNING_KEY_ID: Setting[str | None] = Setting(
    name="ECP_AUDIT_SIGNING_KEY_ID",
    parse=text,
    default=None,
    description="key id published with the public key (default `ed25519:` + 16 hex digits of its SHA-256)",
    shown_default="derived",
)

AUDIT_VERIFICATION_KEYS: Setting[str | None] = Setting(
    name="ECP_AUDIT_VERIFICATION_KEYS",
    parse=text,
    default=None,
    description=(
        "retired audit keys that still verify records and attestations they signed, and are published "
        "at `/v1/audit/signing-keys`: comma-separated `key_id:base64-public-key` pairs (the public "
        "half only)"
    ),
    shown_default="none",
)

AUDIT_SIGNING_REQUIRED: Setting[bool] = Setting(
    name="ECP_AUDIT_SIGNING_REQUIRED",
    parse=flag,
    default=True,
    description=(
        "whether `GET /v1/audit/readiness` requires signed audit records: without a signer the service"
        " reports `not_ready` (ADR 0042)"
    ),
    shown_default="`true`",
)

HOSTED: Setting[bool] = Setting(
    name="ECP_HOSTED",
    parse=flag,
    default=False,
    description="hosted mode: real secrets required, `ecp token` disabled",
    shown_default="`false`",
)

CONSOLE_SESSION_HOURS: Setting[float] = Setting(
    name="ECP_CONSOLE_SESSION_HOURS",
    parse=number(0.01),
    default=12.0,
    description=(
        "how long a console session (`/console/sign-in`, the sealed `ecp_console` cookie) lasts"
        " before the person signs in again (`docs/console.md`, ADR 0080)"
    ),
    shown_default="`12`",
)

WORKERS: Setting[int] = Setting(
    name="ECP_WORKERS",
    parse=whole(1),
    default=1,
    description=(
        "server processes `ecp serve` runs on one port and one database (`ecp serve --workers N` "
        "overrides); the parent starts the embedded PostgreSQL and migrates once, then supervises them"
        " (`docs/scaling.md`, ADR 0062)"
    ),
    shown_default="`1`",
)
