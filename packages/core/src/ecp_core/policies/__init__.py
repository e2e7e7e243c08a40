"""Deployment policies and the guard that evaluates them before every node."""

from ecp_core.policies.guard import Enforcement, evaluate_policy
from ecp_core.policies.model import DeploymentPolicy, DeploymentPolicyRequest

__all__ = ["DeploymentPolicy", "DeploymentPolicyRequest", "Enforcement", "evaluate_policy"]
