"""What an application's own graphs meet at run time: inputs, reviewers' decisions, policies."""

from typing import Any

from hypothesis import strategies as st

from ecp_core.testing.strategies.text import json_values, text
from ecp_core.types import ApprovalDecision, Capability

run_inputs: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
    text(min_size=1, max_size=8), json_values, max_size=4
)
"""A run's input: a small JSON object."""

approval_decisions: st.SearchStrategy[ApprovalDecision] = st.sampled_from(
    [ApprovalDecision.APPROVE, ApprovalDecision.REJECT]
)
"""A reviewer's decision that needs no edited payload."""


def deny_sets(
    capabilities: tuple[Capability, ...] = tuple(Capability),
) -> st.SearchStrategy[frozenset[Capability]]:
    """The capabilities a deployment policy denies: none, some or all of ``capabilities``."""
    return st.frozensets(st.sampled_from(capabilities))
