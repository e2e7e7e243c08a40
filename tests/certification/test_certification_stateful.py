"""A Hypothesis state machine over the certification service on the memory store.

Rules create builds, move them to any state (as an operator or an admin, with or without a
reason or a promotion target), grant and withdraw overrides, and change the facts through the
real services: deploy a graph (one whose irreversible action no approval gates, or a safe one),
set the deployment's policy, submit attestations, and move the injected clock so attestations
(15 minutes) and overrides expire. After every step: no certification is in a state the table
does not reach, every accepted change appended exactly one event and a refused one none, and
no event was ever rewritten.
"""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ecp_core import ActorIdentity, AuthMethod, CreateDeploymentRequest, Ecp, ServiceRole
from ecp_core.attestations.model import AttestationSubmission
from ecp_core.certification.model import (
    CertificationOverrideRequest,
    CertificationState,
    CreateCertificationRequest,
    OverrideScope,
    TransitionRequest,
)
from ecp_core.certification.transitions import TRANSITIONS, met
from ecp_core.errors import (
    CertificationBlocked,
    CertificationRevoked,
    CertificationTransitionNotAllowed,
    Forbidden,
    NotFound,
    ValidationFailed,
)
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.policies.model import DeploymentPolicyRequest
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance._base import THOROUGH
from ecp_core.types import SideEffectClass

pytestmark = [
    pytest.mark.unit,
    pytest.mark.spec("§3.4 certification-states", "§3.4 certification-transitions"),
    pytest.mark.spec("§6.2 certification-events"),
]

S = CertificationState
REACHABLE = {S.BUILDABLE} | {to for _, to in TRANSITIONS}
DEPLOYMENT = "refunds"
NEXT = {S.BUILDABLE: S.TEST_DEPLOYABLE, S.TEST_DEPLOYABLE: S.CERTIFIED, S.CERTIFIED: S.PROMOTED}


def _actor(role: ServiceRole) -> ActorIdentity:
    return ActorIdentity(
        subject=f"{role.value}@acme", auth_method=AuthMethod.BEARER, roles=(role,), tenant_id="acme"
    )


ADMIN, OPERATOR = _actor(ServiceRole.ADMIN), _actor(ServiceRole.OPERATOR)


class CertificationMachine(RuleBasedStateMachine):
    """The service under random calls, with the facts moved by the real services."""

    @initialize(signer=st.sampled_from([True, True, True, False]))
    def start(self, signer):
        self.clock = FixedClock(datetime(2026, 11, 22, 5, 0, tzinfo=UTC))
        self.ecp = Ecp.build(
            MemoryStore().unit_of_work,
            signer=Ed25519Signer.generate() if signer else None,
            clock=self.clock,
            ids=SequentialIds("id"),
        )
        self.ids: list[str] = []
        self.seen: dict[str, list] = {}  # certification id -> its events as last read
        self.states: dict[str, CertificationState] = {}
        self.graph_ref: str | None = None
        self.correlations = itertools.count()
        self.create("c1")

    # --- facts ---------------------------------------------------------------------------

    @precondition(lambda self: self.graph_ref is None)
    @rule(consequential=st.booleans())
    def deploy(self, consequential):
        side_effect = SideEffectClass.IRREVERSIBLE if consequential else SideEffectClass.NONE
        definition = (
            GraphBuilder("pay")
            .action("charge", "echo", side_effect=side_effect)
            .end("done")
            .chain("charge", "done")
            .build()
        )
        self.ecp.graphs.register("acme", definition)
        deployment, _ = self.ecp.graphs.deploy(
            "acme", CreateDeploymentRequest(deployment_ref=DEPLOYMENT, graph_id="pay")
        )
        self.graph_ref = deployment.graph_version_ref

    @precondition(lambda self: self.graph_ref is not None)
    @rule()
    def set_policy(self):
        self.ecp.graphs.put_policy("acme", DEPLOYMENT, DeploymentPolicyRequest())

    @rule(matching=st.sampled_from([True, True, False]))
    def attest(self, matching):
        version = self.graph_ref if matching and self.graph_ref else "other@9"
        self.ecp.attestations.submit(
            "acme",
            AttestationSubmission(
                correlation_id=f"corr-{next(self.correlations)}",
                deployment_ref=DEPLOYMENT,
                graph_version=version,
                adapter_version="1",
                inventory_fingerprint="inv",
                claimed_level="l2",
            ),
        )

    @rule(consequential=st.booleans())
    def make_ready(self, consequential):
        """Every fact at once: deployed (if not yet), a policy, a matching attestation."""
        if self.graph_ref is None:
            self.deploy(consequential)
        self.set_policy()
        self.attest(matching=True)

    @rule(minutes=st.sampled_from([1, 1, 1, 16, 60 * 24, 60 * 24 * 31]))
    def wait(self, minutes):
        self.clock.advance(minutes * 60)

    # --- the service -----------------------------------------------------------------------

    @precondition(lambda self: len(self.ids) < 3)
    @rule(commit=st.sampled_from(["c1", "c2", "c3"]))
    def create(self, commit):
        request = CreateCertificationRequest(
            app_name="shop",
            app_commit=commit,
            image_digest="sha256:" + "b" * 64,
            deployment_ref=DEPLOYMENT,
        )
        answer, created = self.ecp.certifications.create(OPERATOR, request)
        ident = answer.certification_id
        if created:
            assert ident not in self.ids
            assert [e.event_type for e in answer.events] == ["created"]
            assert answer.state == "buildable"
            self.ids.append(ident)
            self.states[ident] = S.BUILDABLE
        else:
            assert ident in self.ids
        self._observe(ident, expect_new=1 if created else 0)

    @precondition(lambda self: self.ids)
    @rule(
        data=st.data(),
        to=st.sampled_from(S),
        admin=st.booleans(),
        reason=st.booleans(),
        keyed=st.booleans(),
    )
    def move(self, data, to, admin, reason, keyed):
        request = TransitionRequest(
            to=to,
            reason="because" if reason else None,
            promotion_target_key="prod-eu" if keyed else None,
        )
        self._move(data.draw(st.sampled_from(self.ids)), request, ADMIN if admin else OPERATOR)

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def advance(self, data):
        """A well-formed move to the next state (or a revocation at the end), as an admin."""
        ident = data.draw(st.sampled_from(self.ids))
        to = NEXT.get(self.states[ident], S.REVOKED)
        request = TransitionRequest(
            to=to,
            reason="done" if to is S.REVOKED else None,
            promotion_target_key="prod-eu" if to is S.PROMOTED else None,
        )
        self._move(ident, request, ADMIN)

    def _move(self, ident, request, actor):
        before = self.ecp.certifications.get("acme", ident)
        current, to = S(before.state), request.to
        needs = TRANSITIONS.get((current, to))
        try:
            after = self.ecp.certifications.transition(actor, ident, request)
        except ValidationFailed:
            keyed = request.promotion_target_key is not None
            assert (to is S.REVOKED and request.reason is None) or ((to is S.PROMOTED) != keyed)
            self._observe(ident, expect_new=0)
            return
        except Forbidden:
            assert to is S.PROMOTED and actor is not ADMIN
            self._observe(ident, expect_new=0)
            return
        except CertificationTransitionNotAllowed:
            assert needs is None
            self._observe(ident, expect_new=0)
            return
        except CertificationBlocked:
            assert needs is not None and not met(needs, before.evaluation)
            self._observe(ident, expect_new=0)
            return
        assert needs is not None and met(needs, before.evaluation), (current, to)
        assert after.state == to.value
        if to is S.PROMOTED:
            assert after.promotion_target_key == "prod-eu"
        self.states[ident] = to
        event(f"moved to {to.value}")
        self._observe(ident, expect_new=1)

    @precondition(lambda self: self.ids)
    @rule(
        data=st.data(),
        scopes=st.lists(st.sampled_from(OverrideScope), min_size=1, unique=True),
        days=st.sampled_from([-1, 0, 1, 30, 31]),
    )
    def grant(self, data, scopes, days):
        ident = data.draw(st.sampled_from(self.ids))
        request = CertificationOverrideRequest(
            scopes=tuple(scopes),
            reason="pilot",
            expires_at=self.clock.now() + timedelta(days=days),
        )
        try:
            answer = self.ecp.certifications.grant_override(ADMIN, ident, request)
        except ValidationFailed:
            assert days not in (1, 30)
            self._observe(ident, expect_new=0)
            return
        except CertificationRevoked:
            assert self.states[ident] is S.REVOKED
            self._observe(ident, expect_new=0)
            return
        assert days in (1, 30)
        assert answer.override is not None and answer.evaluation.override_active
        assert answer.events[-1].scopes == tuple(scopes)
        self._observe(ident, expect_new=1)

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def withdraw(self, data):
        ident = data.draw(st.sampled_from(self.ids))
        had = self.ecp.certifications.get("acme", ident).override is not None
        try:
            answer = self.ecp.certifications.withdraw_override(ADMIN, ident)
        except NotFound:
            assert not had
            self._observe(ident, expect_new=0)
            return
        assert had and answer.override is None
        self._observe(ident, expect_new=1)

    # --- checks ----------------------------------------------------------------------------

    def _observe(self, ident, *, expect_new):
        """The events now are the ones seen before plus exactly ``expect_new`` more."""
        answer = self.ecp.certifications.get("acme", ident)
        before = self.seen.get(ident, [])
        assert answer.events[: len(before)] == tuple(before), "an event was rewritten"
        assert len(answer.events) == len(before) + expect_new
        assert answer.events[-1].state.value == answer.state
        self.seen[ident] = list(answer.events)

    @invariant()
    def states_are_reachable_and_events_tell_them(self):
        for ident in self.ids:
            answer = self.ecp.certifications.get("acme", ident)
            assert S(answer.state) in REACHABLE
            assert S(answer.state) is self.states[ident]
            path = [e.state for e in answer.events if e.event_type in ("created", "transitioned")]
            assert all(pair in TRANSITIONS for pair in itertools.pairwise(path))
            evaluation = answer.evaluation
            assert evaluation.production_ready is (not evaluation.blockers)
            assert evaluation.test_deployable is all(b.overridable for b in evaluation.blockers)
            override = answer.override
            active = override is not None and self.clock.now() < override.expires_at
            assert evaluation.override_active is active


TestCertificationMachine = CertificationMachine.TestCase
TestCertificationMachine.settings = settings(
    max_examples=1000 if THOROUGH else 60,
    stateful_step_count=100 if THOROUGH else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
