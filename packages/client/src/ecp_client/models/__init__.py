"""The API's response models, generated from clients/openapi.json: do not edit by hand.

One module per area of the API; every class is importable from here. ``make clients``
(scripts/generate_python_client.py) writes this package; a test fails when it is stale.
"""

from ecp_client.models.approvals import (
    ActorIdentity,
    ApprovalPageResponse,
    ApprovalRecord,
    ApprovalResolution,
    ApprovalResolutionResponse,
)
from ecp_client.models.audit import (
    AuditBundle,
    AuditTimelineResponse,
    AuditVerificationResponse,
    LogKey,
    NodeAuditRecord,
    PublicSigningKey,
    RecordInclusion,
)
from ecp_client.models.decisions import (
    CalculationInputs,
    CalculationRow,
    ComparisonPolicy,
    ConstraintResult,
    DecisionArtifact,
    DecisionListResponse,
    EvidenceCounts,
    OutcomeSemantics,
    SourceEvidence,
    SourceEvidenceCounts,
)
from ecp_client.models.deployments import Deployment, DeploymentListResponse
from ecp_client.models.evidence import IngestResult
from ecp_client.models.graphs import (
    Condition,
    EdgeDefinition,
    GraphDefinition,
    GraphListResponse,
    GraphRegistration,
    GraphVersion,
)
from ecp_client.models.runs import (
    AdminRunListResponse,
    ApprovalPausedState,
    FailureState,
    RunStatusResponse,
)
from ecp_client.models.tasks import (
    ClaimedTask,
    TaskClaimResponse,
    TaskCompletion,
    TaskListResponse,
    TaskLockResponse,
    TaskSummary,
)
from ecp_client.models.webhooks import (
    Delivery,
    SecretRotated,
    SubscriptionCreated,
    SubscriptionListResponse,
    SubscriptionView,
    WebhookEventPayload,
)

__all__ = [
    "ActorIdentity",
    "AdminRunListResponse",
    "ApprovalPageResponse",
    "ApprovalPausedState",
    "ApprovalRecord",
    "ApprovalResolution",
    "ApprovalResolutionResponse",
    "AuditBundle",
    "AuditTimelineResponse",
    "AuditVerificationResponse",
    "CalculationInputs",
    "CalculationRow",
    "ClaimedTask",
    "ComparisonPolicy",
    "Condition",
    "ConstraintResult",
    "DecisionArtifact",
    "DecisionListResponse",
    "Delivery",
    "Deployment",
    "DeploymentListResponse",
    "EdgeDefinition",
    "EvidenceCounts",
    "FailureState",
    "GraphDefinition",
    "GraphListResponse",
    "GraphRegistration",
    "GraphVersion",
    "IngestResult",
    "LogKey",
    "NodeAuditRecord",
    "OutcomeSemantics",
    "PublicSigningKey",
    "RecordInclusion",
    "RunStatusResponse",
    "SecretRotated",
    "SourceEvidence",
    "SourceEvidenceCounts",
    "SubscriptionCreated",
    "SubscriptionListResponse",
    "SubscriptionView",
    "TaskClaimResponse",
    "TaskCompletion",
    "TaskListResponse",
    "TaskLockResponse",
    "TaskSummary",
    "WebhookEventPayload",
]
