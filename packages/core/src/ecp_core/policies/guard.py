"""The policy guard: decides, before a node runs, whether the policy lets it run."""

from typing import Any

import attrs

from ecp_core.constraints import checked
from ecp_core.graphs.definition import NodeDefinition
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.types import Capability


@attrs.frozen(kw_only=True, field_transformer=checked)
class Enforcement:
    """A guard decision as written into ``execution_metadata.enforcement``."""

    decision: str
    reason: str
    policy_id: str
    policy_version: int
    denied_capabilities: tuple[Capability, ...]

    def as_metadata(self) -> dict[str, Any]:
        """The JSON object stored in the audit record."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "policy_id": self.policy_id,
            "policy_version": self.policy_version,
            "denied_capabilities": [str(item) for item in self.denied_capabilities],
        }


def evaluate_policy(policy: DeploymentPolicy | None, node: NodeDefinition) -> Enforcement | None:
    """Return a deny decision when ``policy`` denies a capability bound to ``node``, else None."""
    if policy is None:
        return None
    denied = tuple(sorted(set(node.capabilities) & set(policy.deny_capabilities)))
    if not denied:
        return None
    names = ", ".join(denied)
    return Enforcement(
        decision="deny",
        reason=f"policy denies capability {names} required by node {node.id!r}",
        policy_id=policy.policy_id,
        policy_version=policy.policy_version,
        denied_capabilities=denied,
    )
