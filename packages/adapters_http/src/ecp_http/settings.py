"""Settings read from an injected mapping (the environment by default) into a frozen object."""

import os
import pathlib
from collections.abc import Mapping

import attrs

from ecp_core.retention.model import MAX_TTL_SECONDS


class SettingsError(ValueError):
    """A setting is invalid; the message names it."""


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:  # noqa: FBT001
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def _number(
    env: Mapping[str, str], name: str, default: float, *, minimum: float, integer: bool = False
) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise SettingsError(
            f"{name} must be a {'whole ' if integer else ''}number, not {raw!r}"
        ) from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {raw!r}")
    return value


def _ttl(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_TTL_SECONDS:
        raise SettingsError(
            f"{name} must be whole seconds from 1 to {MAX_TTL_SECONDS}, not {raw!r}"
        )
    return int(raw)


@attrs.frozen(kw_only=True)
class Settings:
    """Everything the server is configured with."""

    database_url: str | None = None
    data_dir: pathlib.Path = pathlib.Path(".ecp")
    host: str = "127.0.0.1"
    port: int = 8000
    jwt_secret: str | None = None
    audit_signing_key: str | None = None
    audit_signing_key_id: str | None = None
    hosted: bool = False
    dispatch_workers: int = 2
    dispatch_poll_seconds: float = 0.2
    max_wait_seconds: float = 60.0
    escalation_interval_seconds: float = 30.0
    artifacts_dir: pathlib.Path | None = None
    retention_enabled: bool = False
    retention_poll_seconds: float = 300.0
    retention_default_audit_ttl_seconds: int | None = None
    retention_default_run_ttl_seconds: int | None = None
    retention_econ_erase_enabled: bool = False
    webhook_max_attempts: int = 5
    webhook_backoff_base_seconds: float = 2.0
    webhook_backoff_max_seconds: float = 3600.0
    webhook_timeout_seconds: float = 10.0
    webhook_allow_private_targets: bool = False
    webhook_poll_seconds: float = 0.1
    scheduler_enabled: bool = True
    scheduler_interval_seconds: float = 60.0

    @classmethod
    def from_mapping(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """Read ``ECP_*`` settings; raise SettingsError naming the first invalid one."""
        env = os.environ if env is None else env
        jwt_secret = env.get("ECP_JWT_SECRET") or None
        if jwt_secret is not None and len(jwt_secret) < 32:  # noqa: PLR2004 - HS256 wants 256 bits
            raise SettingsError("ECP_JWT_SECRET must be at least 32 characters")
        port = int(_number(env, "ECP_PORT", 8000, minimum=1, integer=True))
        if port > 65535:  # noqa: PLR2004
            raise SettingsError(f"ECP_PORT must be at most 65535, not {port}")
        return cls(
            database_url=env.get("ECP_DATABASE_URL") or None,
            data_dir=pathlib.Path(env.get("ECP_DATA_DIR") or ".ecp"),
            host=env.get("ECP_HOST") or "127.0.0.1",
            port=port,
            jwt_secret=jwt_secret,
            audit_signing_key=env.get("ECP_AUDIT_SIGNING_KEY") or None,
            audit_signing_key_id=env.get("ECP_AUDIT_SIGNING_KEY_ID") or None,
            hosted=_flag(env, "ECP_HOSTED", default=False),
            dispatch_workers=int(_number(env, "ECP_DISPATCH_WORKERS", 2, minimum=1, integer=True)),
            dispatch_poll_seconds=_number(env, "ECP_DISPATCH_POLL_SECONDS", 0.2, minimum=0.01),
            max_wait_seconds=_number(env, "ECP_MAX_WAIT_SECONDS", 60.0, minimum=0),
            artifacts_dir=pathlib.Path(env["ECP_ARTIFACTS_DIR"])
            if env.get("ECP_ARTIFACTS_DIR")
            else None,
            retention_enabled=_flag(env, "SERVICE_RETENTION__ENABLED", default=False),
            retention_poll_seconds=_number(
                env, "SERVICE_RETENTION__WORKER_POLL_INTERVAL", 300.0, minimum=1
            ),
            retention_default_audit_ttl_seconds=_ttl(
                env, "SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS"
            ),
            retention_default_run_ttl_seconds=_ttl(
                env, "SERVICE_RETENTION__DEFAULT_RUN_TTL_SECONDS"
            ),
            retention_econ_erase_enabled=_flag(
                env, "SERVICE_RETENTION__ECON_ERASE_ENABLED", default=False
            ),
            scheduler_enabled=_flag(env, "ECP_CLOUD_SCHEDULER_ENABLED", default=True),
            scheduler_interval_seconds=_number(
                env, "ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS", 60.0, minimum=0.05
            ),
            webhook_max_attempts=int(
                _number(env, "ECP_WEBHOOK_MAX_ATTEMPTS", 5, minimum=1, integer=True)
            ),
            webhook_backoff_base_seconds=_number(
                env, "ECP_WEBHOOK_BACKOFF_BASE_SECONDS", 2.0, minimum=0.01
            ),
            webhook_backoff_max_seconds=_number(
                env, "ECP_WEBHOOK_BACKOFF_MAX_SECONDS", 3600.0, minimum=0.01
            ),
            webhook_timeout_seconds=_number(env, "ECP_WEBHOOK_TIMEOUT_SECONDS", 10.0, minimum=0.1),
            webhook_allow_private_targets=_flag(
                env, "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False
            ),
            webhook_poll_seconds=_number(env, "ECP_WEBHOOK_POLL_SECONDS", 0.1, minimum=0.01),
            escalation_interval_seconds=_number(
                env, "ECP_ESCALATION_INTERVAL_SECONDS", 30.0, minimum=0.1
            ),
        )
