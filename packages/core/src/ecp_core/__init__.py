"""ECP core: governed workflow runs with approvals, a policy guard and a signed audit chain.

The core is pure: it reaches storage, time, ids and keys only through the ports in
:mod:`ecp_core.ports`. :class:`Ecp` wires the use cases; :meth:`Ecp.in_memory` runs everything in
memory for embedding and tests.
"""

from ecp_core.approvals import ApprovalRecord, ApprovalResolutionRequest
from ecp_core.audit import AuditVerificationResponse, Ed25519Signer, KeyRing, NodeAuditRecord
from ecp_core.deployments import CreateDeploymentRequest
from ecp_core.errors import EcpError, FieldError, NotFound, ValidationFailed
from ecp_core.graphs import GraphBuilder, GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.policies import DeploymentPolicyRequest
from ecp_core.runs import ActionContext, ActionRegistry, Run, RunStatusResponse, StartRunRequest
from ecp_core.service import Ecp
from ecp_core.types import (
    ApprovalDecision,
    AuthMethod,
    Capability,
    RunPublicStatus,
    RunStatus,
    ServiceRole,
)
from ecp_core.wire import structure, unstructure

__all__ = [
    "ActionContext",
    "ActionRegistry",
    "ActorIdentity",
    "ApprovalDecision",
    "ApprovalRecord",
    "ApprovalResolutionRequest",
    "AuditVerificationResponse",
    "AuthMethod",
    "Capability",
    "CreateDeploymentRequest",
    "DeploymentPolicyRequest",
    "Ecp",
    "EcpError",
    "Ed25519Signer",
    "FieldError",
    "GraphBuilder",
    "GraphDefinition",
    "KeyRing",
    "NodeAuditRecord",
    "NotFound",
    "Run",
    "RunPublicStatus",
    "RunStatus",
    "RunStatusResponse",
    "ServiceRole",
    "StartRunRequest",
    "ValidationFailed",
    "structure",
    "unstructure",
]
