"""What a run's attempts read besides the run, joined to a statement that is sent anyway.

An attempt needs its tenant's audit settings (the digest version), its deployment's policy,
whether the deployment has live webhook subscriptions and whether its tenant has concurrency
limits (ADR 0079). A run's lock joins them
(:data:`ecp_postgres.runs._LOCK`, ADR 0059), and so does a deployment's read, which a start makes
before it adds and attempts its run (ADR 0067); the transaction remembers them under the keys the
repositories read them by (:mod:`ecp_postgres.session`), so no attempt reads them again.
"""

from collections.abc import Hashable
from typing import Any

import psycopg

from ecp_postgres.audit import SETTINGS, settings_key
from ecp_postgres.policies import POLICIES, policy_key
from ecp_postgres.rows import Table
from ecp_postgres.session import session_of
from ecp_postgres.webhooks import LIVE_SUBSCRIPTION, PostgresWebhooks, subscribed_key


def limited_key(tenant_id: str) -> Hashable:
    """The memo key of whether the tenant has concurrency limits."""
    return ("limited", tenant_id)


def prefixed(prefix: str, table: Table[Any], alias: str) -> str:
    """``table``'s columns under ``alias``, each named ``prefix`` + column."""
    return ", ".join(f"{alias}.{c} AS {prefix}{c}" for c in table.columns)


def context_columns(alias: str) -> str:
    """The select list of the context of the row ``alias`` (it has tenant_id, deployment_ref)."""
    return f"""s.tenant_id AS settings__present, {prefixed("settings__", SETTINGS, "s")},
       p.tenant_id AS policy__present, {prefixed("policy__", POLICIES, "p")},
       EXISTS (SELECT 1 FROM ecp_webhook_subscriptions w
                WHERE w.tenant_id = {alias}.tenant_id AND w.deployment_ref = {alias}.deployment_ref
                  AND w.{LIVE_SUBSCRIPTION}) AS subscribed,
       EXISTS (SELECT 1 FROM ecp_tenant_limits l
                WHERE l.tenant_id = {alias}.tenant_id) AS limited"""  # noqa: S608 - column names are ours


def context_joins(alias: str) -> str:
    """The joins :func:`context_columns` reads from."""
    return f"""
  LEFT JOIN ecp_audit_settings s ON s.tenant_id = {alias}.tenant_id
  LEFT JOIN ecp_policies p
         ON p.tenant_id = {alias}.tenant_id AND p.deployment_ref = {alias}.deployment_ref"""


_PARTS: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, str], ...]] = {}
"""Per prefix and row shape: (name, column) of the row's columns under the prefix. Bounded by the
statements that join parts (a few shapes each)."""


def part(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The columns of ``row`` named ``prefix`` + name, by name."""
    shape = (prefix, tuple(row))
    pairs = _PARTS.get(shape)
    if pairs is None:
        pairs = _PARTS[shape] = tuple(
            (key[len(prefix) :], key) for key in row if key.startswith(prefix)
        )
    return {name: row[key] for name, key in pairs}


def known(conn: psycopg.Connection[Any], tenant_id: str, deployment_ref: str) -> bool:
    """Whether this transaction remembers the settings and policy a run of the deployment needs."""
    session = session_of(conn)
    return (
        session is not None
        and settings_key(tenant_id) in session.memo
        and policy_key(tenant_id, deployment_ref) in session.memo
    )


def remember(
    conn: psycopg.Connection[Any],
    row: dict[str, Any],
    tenant_id: str,
    deployment_ref: str,
    *,
    read_subscriptions: bool,
) -> None:
    """Keep the settings and policy of ``row``'s context, and its subscriptions when it has none.

    A deployment with live subscriptions has them read now with ``read_subscriptions`` (ahead of
    the writes waiting in the batch and of the attempt's, so that those still leave together),
    else when first needed.
    """
    session = session_of(conn)
    if session is None:
        return
    memo = session.memo
    settings = part(row, "settings__")
    memo[settings_key(tenant_id)] = (
        None if settings.pop("present") is None else SETTINGS.load(settings)
    )
    policy = part(row, "policy__")
    memo[policy_key(tenant_id, deployment_ref)] = (
        None if policy.pop("present") is None else POLICIES.load(policy)
    )
    memo[limited_key(tenant_id)] = row["limited"]
    if not row["subscribed"]:
        memo[subscribed_key(tenant_id, deployment_ref)] = []
    elif read_subscriptions:
        PostgresWebhooks(conn).live_for(tenant_id, deployment_ref, before_writes=True)
