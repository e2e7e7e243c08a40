"""Webhook subscriptions and event payloads (CONTRACT.md "Webhooks")."""

import enum
from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Items, Text, checked

TARGET_URL = r"https?://[^\s]+"


class WebhookEventType(enum.StrEnum):
    """Events a subscription can ask for."""

    RUN_STARTED = "run.started"
    RUN_WAITING_APPROVAL = "run.waiting_approval"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_TERMINATED_BY_POLICY = "run.terminated_by_policy"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_RESOLVED = "approval.resolved"


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateSubscriptionRequest:
    """Body of ``POST /webhooks/subscriptions``; without ``secret`` the server makes one."""

    deployment_ref: Annotated[str, Text(1, 512)]
    target_url: Annotated[str, Text(1, 2048, pattern=TARGET_URL)]
    event_types: Annotated[tuple[WebhookEventType, ...], Items(1, 5, unique=True)]
    tenant_id: Annotated[str, Text(1, 512)] = "default"
    secret: Annotated[str, Text(16, 512)] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class WebhookEventPayload:
    """The JSON body every delivery carries; ``event_id`` is stable across retries."""

    event_id: str
    event_type: WebhookEventType
    tenant_id: str
    deployment_ref: str
    occurred_at: Annotated[datetime, AwareUtc()]
    data: dict[str, Any] = attrs.field(factory=dict)
