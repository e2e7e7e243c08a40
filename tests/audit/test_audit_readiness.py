"""Audit readiness: the rule, what counts as a consequential action, and the facade's facts."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.deployments import CreateDeploymentRequest
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.runs.audit.readiness import DeploymentMode, ReadinessState, assess, consequential
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.types import SideEffectClass

pytestmark = [pytest.mark.unit, pytest.mark.spec("§2.3 audit-readiness")]


@given(
    required=st.booleans(),
    signer=st.booleans(),
    consequential_actions=st.booleans(),
    mode=st.sampled_from(DeploymentMode),
)
def test_not_ready_exactly_when_signatures_are_needed_and_none_can_be_made(
    required, signer, consequential_actions, mode
):
    """ready ⇔ a signer, or nothing needs one; the state and the facts say the same."""
    found = assess(
        signing_required=required,
        signer_available=signer,
        consequential_actions=consequential_actions,
        deployment_mode=mode,
    )
    assert found.ready is (signer or not (required or consequential_actions))
    expected = (
        ReadinessState.READY
        if signer
        else ReadinessState.NOT_READY
        if not found.ready
        else ReadinessState.DEGRADED
    )
    assert found.state == expected.value
    assert (found.signing_required, found.signer_available) == (required, signer)
    assert found.consequential_actions is consequential_actions
    assert found.deployment_mode == mode.value
    assert found.message.endswith(".")
    assert found.message.count(". ") == 0  # one sentence


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda b: b.action("n", "echo"), True),  # undeclared: unknown
        (lambda b: b.action("n", "echo", side_effect=SideEffectClass.UNKNOWN), True),
        (lambda b: b.action("n", "echo", side_effect=SideEffectClass.NON_IDEMPOTENT), True),
        (lambda b: b.action("n", "echo", side_effect=SideEffectClass.IRREVERSIBLE), True),
        (lambda b: b.action("n", "echo", side_effect=SideEffectClass.NONE), False),
        (lambda b: b.action("n", "echo", side_effect=SideEffectClass.IDEMPOTENT), False),
        (lambda b: b.action("n", "http_request", side_effect=SideEffectClass.IDEMPOTENT), True),
        (lambda b: b.task("n", "topic", side_effect=SideEffectClass.NONE), True),
        (lambda b: b.approval("n", summary="s", rationale="r"), False),
        (lambda b: b.interrupt("n", prompt="p"), False),
    ],
)
def test_what_counts_as_a_consequential_action(make, expected):
    """Actions unless declared none/idempotent; http_request and task nodes always."""
    node = make(GraphBuilder("g")).end("done").chain("n", "done").build().node("n")
    assert consequential(node) is expected


def deploy(ecp: Ecp, tenant: str, ref: str, side_effect: SideEffectClass) -> None:
    definition = (
        GraphBuilder(f"graph-{ref}")
        .action("a", "echo", side_effect=side_effect)
        .end("done")
        .chain("a", "done")
        .build()
    )
    registered = ecp.graphs.register(tenant, definition)
    ecp.graphs.deploy(
        tenant,
        CreateDeploymentRequest(
            deployment_ref=ref, graph_id=registered.graph_id, graph_version=registered.version
        ),
    )


def test_only_the_tenants_deployed_graphs_count():
    """A registered but undeployed graph, or another tenant's deployment, is not counted."""
    ecp = Ecp.build(MemoryStore().unit_of_work, signer=Ed25519Signer.generate())
    assert not ecp.audit_readiness.check("acme").consequential_actions
    deploy(ecp, "acme", "calm", SideEffectClass.IDEMPOTENT)
    deploy(ecp, "globex", "wild", SideEffectClass.IRREVERSIBLE)
    ecp.graphs.register(
        "acme",
        GraphBuilder("undeployed").action("a", "echo").end("done").chain("a", "done").build(),
    )
    assert not ecp.audit_readiness.check("acme").consequential_actions
    assert ecp.audit_readiness.check("globex").consequential_actions
    deploy(ecp, "acme", "risky", SideEffectClass.NON_IDEMPOTENT)
    found = ecp.audit_readiness.check("acme")
    assert (found.ready, found.state, found.consequential_actions) == (True, "ready", True)
    assert found.deployment_mode == "embedded"


def test_without_a_signer_the_facade_reports_degraded_or_not_ready():
    """signer=None: degraded while nothing needs signatures, not ready once something does."""
    store = MemoryStore()
    optional = Ecp.build(store.unit_of_work, signer=None, audit_signing_required=False)
    deploy(optional, "acme", "calm", SideEffectClass.NONE)
    calm = optional.audit_readiness.check("acme")
    assert (calm.ready, calm.state, calm.signer_available) == (True, "degraded", False)
    deploy(optional, "acme", "risky", SideEffectClass.UNKNOWN)
    risky = optional.audit_readiness.check("acme")
    assert (risky.ready, risky.state) == (False, "not_ready")
    assert "consequential actions" in risky.message
    required = Ecp.build(MemoryStore().unit_of_work, signer=None)
    bare = required.audit_readiness.check("acme")
    assert (bare.ready, bare.state, bare.signing_required) == (False, "not_ready", True)
    assert "signing is required" in bare.message
