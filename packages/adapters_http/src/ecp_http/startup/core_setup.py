"""What the core is built with, read from the settings: the audit keys, actions and models.

The composition root (:mod:`ecp_http.startup.bootstrap`) hands these to ``Ecp.build``; the command line
uses :func:`action_registry` to list actions without a server.
"""

import base64
import binascii

from ecp_core.backtests.digest import DigestKeys
from ecp_core.backtests.limits import BacktestLimits, BacktestSetup
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.signing import Ed25519Signer, PublicSigningKey
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.config.table.serving import AUDIT_SIGNING_KEY, AUDIT_VERIFICATION_KEYS, JWT_SECRET
from ecp_http.outbound.http_action import builtin_actions
from ecp_http.outbound.model_calls.model_call import register_model_call
from ecp_http.outbound.model_calls.providers import CatalogModels, catalog_models
from ecp_http.startup.plugins import load_plugins

RETIRED_AUDIT_KEYS = AUDIT_VERIFICATION_KEYS.name
"""Retired audit keys that still verify old signatures: ``key_id:base64-public-key`` pairs."""

_PUBLIC_KEY_BYTES = 32


def audit_signer(settings: Settings) -> Ed25519Signer:
    """The audit signer; SettingsError when the secrets are missing or the key is not one."""
    if not settings.jwt_secret:
        raise SettingsError(f"{JWT_SECRET.name} is not set")
    if not settings.audit_signing_key:
        raise SettingsError(f"{AUDIT_SIGNING_KEY.name} is not set")
    try:
        return Ed25519Signer.from_base64_seed(
            settings.audit_signing_key, settings.audit_signing_key_id
        )
    except ValueError as exc:
        raise SettingsError(f"{AUDIT_SIGNING_KEY.name}: {exc}") from exc


def retired_audit_keys(value: str | None, current_key_id: str) -> tuple[PublicSigningKey, ...]:
    """The retired public keys of ``ECP_AUDIT_VERIFICATION_KEYS``; SettingsError names a bad one.

    After a rotation, the old key's public half listed here keeps every record and attestation
    it signed verifying; the server signs only with ``ECP_AUDIT_SIGNING_KEY``.
    """
    keys: dict[str, PublicSigningKey] = {}
    for pair in filter(None, (part.strip() for part in (value or "").split(","))):
        key_id, colon, public_key = pair.rpartition(":")
        if not colon or not key_id:
            raise SettingsError(f"{RETIRED_AUDIT_KEYS}: each entry is key_id:base64-public-key")
        if key_id in keys or key_id == current_key_id:
            raise SettingsError(f"{RETIRED_AUDIT_KEYS}: key id {key_id!r} is given twice")
        try:
            raw = base64.b64decode(public_key, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != _PUBLIC_KEY_BYTES:
            raise SettingsError(
                f"{RETIRED_AUDIT_KEYS}: the key of {key_id!r} is not a base64 Ed25519 public key"
            )
        keys[key_id] = PublicSigningKey(key_id=key_id, public_key=public_key)
    return tuple(keys.values())


def models_from_settings(settings: Settings) -> CatalogModels | None:
    """The catalog's models behind one provider (ADR 0037); None without ``ECP_MODEL_CATALOG``."""
    if not settings.model_catalog:
        return None
    secrets = ActionSecrets(settings.secrets, settings.secrets_dir)
    return catalog_models(settings.model_catalog, secrets)


def action_registry(settings: Settings) -> ActionRegistry:
    """Every action the server runs: the built-ins, then the plug-ins (ADR 0027).

    The one place built-ins are registered; PluginFailed names a plug-in that fails.
    """
    registry = ActionRegistry()  # the core's built-ins: echo and set
    builtin_actions(registry, settings)  # the server's own: http_request (ADR 0028)
    register_model_call(  # model_call, when a model catalog is configured (ADR 0037)
        registry,
        models_from_settings(settings),
        timeout_seconds=settings.model_call_timeout_seconds,
    )
    load_plugins(registry, settings.action_modules)
    return registry


def backtest_setup(settings: Settings) -> BacktestSetup | None:
    """What backtests run with; None (backtests off) without a model catalog or a digest key."""
    provider = models_from_settings(settings)
    key, key_id = settings.backtest_digest_key, settings.backtest_digest_key_id
    if provider is None or key is None or key_id is None:
        return None
    return BacktestSetup(
        provider=provider,
        keys=DigestKeys(key_id=key_id, key=key, retired=settings.backtest_digest_keys_retired),
        limits=BacktestLimits(
            deadline_seconds=settings.backtest_deadline_seconds,
            call_timeout_seconds=settings.model_call_timeout_seconds,
            max_calls_per_backtest=settings.backtest_max_calls,
            max_calls_per_day=settings.backtest_max_calls_per_day,
        ),
    )
