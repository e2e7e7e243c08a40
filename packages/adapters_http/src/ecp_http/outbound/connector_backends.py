"""The backends a connector test calls: the catalog's models (one try) and a guarded HTTP probe.

:class:`HttpProbe` implements :class:`~ecp_core.ports.connectors.ConnectorProbe`: one ``GET``
through the outbound address guard, pinned to the address it checked, no redirects, the body
read no further than :data:`MAX_PROBE_BYTES`; the auth header's value is a secret looked up by
name at call time and never appears in an answer (ADR 0044). :func:`connector_setup` builds
what the core's connector services work with from the settings.
"""

import httpx

from ecp_core.connectors.service import ConnectorSetup
from ecp_core.ports.connectors import ProbeAnswer, ProbeTarget
from ecp_http.config.action_secrets import ActionSecrets, SecretUnavailable, redacted
from ecp_http.config.settings import Settings
from ecp_http.outbound import (
    AddressGuard,
    Refusal,
    Resolver,
    outbound_client,
    pin,
    pinned_stream,
    resolve_host,
)
from ecp_http.outbound.model_calls.provider import RetryPolicy
from ecp_http.outbound.model_calls.providers import catalog_models

MAX_PROBE_BYTES = 64 * 1024
"""A probe reads at most this much of the answer (its status is what counts)."""

ONE_TRY = RetryPolicy(attempts=1, wait_initial=0, wait_max=0, wait_jitter=0)
"""A test is one call: a retry would be a second, unreserved one."""

USER_AGENT = "ecp-connector-test/1"


class HttpProbe:
    """One guarded ``GET`` per test (the server's :class:`ConnectorProbe`)."""

    def __init__(
        self, guard: AddressGuard, secrets: ActionSecrets, *, resolver: Resolver = resolve_host
    ) -> None:
        """Reach what ``guard`` allows, with secrets from ``secrets``."""
        self._guard = guard
        self._secrets = secrets
        self._resolver = resolver

    def probe(self, target: ProbeTarget) -> ProbeAnswer:
        """``GET`` the target; every failure is an answer naming it, never a secret value."""
        headers = {"User-Agent": USER_AGENT, **target.headers}
        values = []
        for header, name in target.secret_headers.items():
            try:
                value = self._secrets.value(name)
            except SecretUnavailable as exc:
                return ProbeAnswer(status=None, failure=f"secret_missing: {exc}")
            headers[header] = value
            values.append(value)
        pinned = pin(target.url, self._guard, resolver=self._resolver)
        if isinstance(pinned, Refusal):
            return ProbeAnswer(status=None, failure=f"target_refused: {pinned.reason}")
        try:
            with (
                outbound_client(target.timeout_seconds) as client,
                pinned_stream(client, "GET", pinned, headers=headers) as response,
            ):
                read = 0
                for chunk in response.iter_bytes():
                    read += len(chunk)
                    if read >= MAX_PROBE_BYTES:
                        break
                request_id = response.headers.get("x-request-id") or response.headers.get(
                    "request-id"
                )
                return ProbeAnswer(
                    status=response.status_code,
                    request_id=None if request_id is None else request_id[:256],
                )
        except httpx.TimeoutException:
            failure = f"timeout: no answer within {target.timeout_seconds:g} seconds"
        except httpx.HTTPError as exc:
            failure = f"unreachable: {type(exc).__name__}: {exc}"
        return ProbeAnswer(status=None, failure=redacted(failure, values))


def connector_setup(settings: Settings, *, resolver: Resolver = resolve_host) -> ConnectorSetup:
    """The settings-defined connectors, the catalog's models (one try each) and the probe."""
    secrets = ActionSecrets(settings.secrets, settings.secrets_dir)
    allow = settings.connector_allow_private_targets
    guard = AddressGuard(
        allow_loopback=allow,
        allow_private=allow,
        unlock_hint="ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS allows it",
    )
    catalog = settings.model_catalog
    return ConnectorSetup(
        defined=dict(settings.connectors),
        models=catalog_models(catalog, secrets, policy=ONE_TRY) if catalog else None,
        probe=HttpProbe(guard, secrets, resolver=resolver),
        timeout_seconds=settings.connector_test_timeout_seconds,
    )


__all__ = ["MAX_PROBE_BYTES", "ONE_TRY", "HttpProbe", "connector_setup"]
