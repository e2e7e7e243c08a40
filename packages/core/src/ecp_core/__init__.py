"""ECP core: governed workflow runs with approvals, a policy guard and a signed audit chain.

The core is pure: it reaches storage, time, ids and keys only through the ports in
:mod:`ecp_core.ports`. :class:`Ecp` wires the use cases; :meth:`Ecp.in_memory` runs everything in
memory for embedding and tests.

Each public name is imported from its module on first use (PEP 562), so ``import ecp_core`` costs
next to nothing and a program pays only for the areas it touches: :class:`Ecp` loads them all
(ADR 0052).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ecp_core.audit import AuditVerificationResponse, Ed25519Signer, KeyRing, NodeAuditRecord
    from ecp_core.deployments import CreateDeploymentRequest
    from ecp_core.errors import EcpError, FieldError, NotFound, ValidationFailed
    from ecp_core.graphs import GraphBuilder, GraphDefinition
    from ecp_core.identity import ActorIdentity
    from ecp_core.policies import DeploymentPolicyRequest
    from ecp_core.runs import (
        ActionContext,
        ActionRegistry,
        Run,
        RunStatusResponse,
        StartRunRequest,
    )
    from ecp_core.runs.approvals import ApprovalRecord, ApprovalResolutionRequest
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

_HOMES: dict[str, str] = {
    "ActionContext": "ecp_core.runs",
    "ActionRegistry": "ecp_core.runs",
    "ActorIdentity": "ecp_core.identity",
    "ApprovalDecision": "ecp_core.types",
    "ApprovalRecord": "ecp_core.runs.approvals",
    "ApprovalResolutionRequest": "ecp_core.runs.approvals",
    "AuditVerificationResponse": "ecp_core.audit",
    "AuthMethod": "ecp_core.types",
    "Capability": "ecp_core.types",
    "CreateDeploymentRequest": "ecp_core.deployments",
    "DeploymentPolicyRequest": "ecp_core.policies",
    "Ecp": "ecp_core.service",
    "EcpError": "ecp_core.errors",
    "Ed25519Signer": "ecp_core.audit",
    "FieldError": "ecp_core.errors",
    "GraphBuilder": "ecp_core.graphs",
    "GraphDefinition": "ecp_core.graphs",
    "KeyRing": "ecp_core.audit",
    "NodeAuditRecord": "ecp_core.audit",
    "NotFound": "ecp_core.errors",
    "Run": "ecp_core.runs",
    "RunPublicStatus": "ecp_core.types",
    "RunStatus": "ecp_core.types",
    "RunStatusResponse": "ecp_core.runs",
    "ServiceRole": "ecp_core.types",
    "StartRunRequest": "ecp_core.runs",
    "ValidationFailed": "ecp_core.errors",
    "structure": "ecp_core.wire",
    "unstructure": "ecp_core.wire",
}
"""Public name → the module it lives in (``__all__`` lists the same names)."""


if not TYPE_CHECKING:  # hidden from type checkers: a name missing above is an error, not `object`

    def __getattr__(name: str) -> object:
        """Import a public name from its module the first time it is asked for, then keep it."""
        home = _HOMES.get(name)
        if home is None:
            msg = f"module {__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    """The module's own names and every public name, loaded or not."""
    return sorted({*globals(), *_HOMES})


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
