"""Attempts that change nothing outside the run share a transaction; one with effects ends it.

ADR 0059: after an attempt of a structural node or of an action registered with
``side_effect: none``, the next attempt joins the same unit of work; an action with effects (or
unknown ones) is the last attempt before the commit.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core import (
    ActionRegistry,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.memory import MemoryStore
from ecp_core.runs.engine.service import CHAINED_ATTEMPTS
from ecp_core.types import RunStatus, SideEffectClass

pytestmark = pytest.mark.unit

SIGNER = Ed25519Signer(bytes(range(5, 37)), key_id="chain")
EFFECTS = [
    SideEffectClass.UNKNOWN,
    SideEffectClass.IDEMPOTENT,
    SideEffectClass.NON_IDEMPOTENT,
    SideEffectClass.IRREVERSIBLE,
]


class Counting:
    """How many units of work were committed: one per transaction."""

    def __init__(self, factory):
        self._factory = factory
        self.commits = 0

    def __call__(self):
        unit = self._factory()
        commit = unit.commit

        def counted():
            self.commits += 1
            commit()

        unit.commit = counted
        return unit


def world(kinds):
    """A run over one action node per entry of ``kinds`` (None: pure ``set``), then an end."""
    actions = ActionRegistry()
    for index, effect in enumerate(EFFECTS):
        actions.register(f"effect{index}", lambda context: {}, side_effect=effect)
    builder = GraphBuilder("chain")
    names = []
    for index, kind in enumerate(kinds):
        name = f"n{index}"
        if kind is None:
            builder = builder.action(name, "set", arguments={"values": {name: index}})
        else:
            builder = builder.action(name, f"effect{kind}")
        names.append(name)
    graph = builder.end("done").chain(*names, "done").build()
    counting = Counting(MemoryStore().unit_of_work)
    ecp = Ecp.build(counting, signer=SIGNER, actions=actions)
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="chain"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return ecp, counting, run


kinds_of_nodes = st.lists(st.one_of(st.none(), st.integers(0, len(EFFECTS) - 1)), max_size=20)


@settings(max_examples=60, deadline=None)
@given(kinds_of_nodes)
def test_one_advance_runs_up_to_and_including_the_first_action_with_effects(kinds):
    ecp, counting, run = world(kinds)
    before = counting.commits
    advanced = ecp.runs.advance("t", run.run_id)
    assert counting.commits == before + 1  # one transaction
    effects = [index for index, kind in enumerate(kinds) if kind is not None]
    nodes = len(kinds) + 1  # the end node too
    expected = min(effects[0] + 1 if effects else nodes, CHAINED_ATTEMPTS)
    assert advanced.attempts == expected
    timeline = ecp.audit.timeline("t", run.run_id).entries
    assert [entry.node_id for entry in timeline] == [*(f"n{i}" for i in range(len(kinds))), "done"][
        :expected
    ]
    finished = not effects and nodes <= CHAINED_ATTEMPTS
    assert (advanced.status is RunStatus.COMPLETED) == finished


@settings(max_examples=40, deadline=None)
@given(kinds_of_nodes)
def test_driven_to_the_end_every_node_runs_once_in_as_few_transactions_as_is_safe(kinds):
    ecp, counting, run = world(kinds)
    before = counting.commits
    done = ecp.runs.drive("t", run.run_id)
    assert done.status is RunStatus.COMPLETED
    entries = ecp.audit.timeline("t", run.run_id).entries
    assert [entry.node_id for entry in entries] == [f"n{i}" for i in range(len(kinds))] + ["done"]
    # A transaction ends after each action with effects, after 16 attempts, and at the end.
    transactions, chained = 0, 0
    for kind in [*kinds, None]:
        chained += 1
        if kind is not None or chained == CHAINED_ATTEMPTS:
            transactions, chained = transactions + 1, 0
    transactions += 1 if chained else 0
    assert counting.commits - before == transactions
    assert ecp.audit.verify_run("t", run.run_id).verified


@settings(max_examples=40, deadline=None)
@given(kinds_of_nodes)
def test_a_start_and_drive_commits_the_first_attempts_without_effects_with_the_start(kinds):
    """ADR 0067: the start's transaction makes the attempts before the first action with effects."""
    ecp, counting, _ = world(kinds)
    before = counting.commits
    run, created = ecp.runs.start_and_drive("t", StartRunRequest(deployment_ref="d"))
    assert created
    assert run.status is RunStatus.COMPLETED
    entries = ecp.audit.timeline("t", run.run_id).entries
    assert [entry.node_id for entry in entries] == [f"n{i}" for i in range(len(kinds))] + ["done"]
    assert ecp.audit.verify_run("t", run.run_id).verified
    # The start takes the nodes up to the first action with effects (16 at most); drive the rest.
    nodes = [*kinds, None]
    first = next((i for i, kind in enumerate(nodes) if kind is not None), len(nodes))
    in_start = min(first, CHAINED_ATTEMPTS)
    transactions, chained = 1, 0
    for kind in nodes[in_start:]:
        chained += 1
        if kind is not None or chained == CHAINED_ATTEMPTS:
            transactions, chained = transactions + 1, 0
    transactions += 1 if chained else 0
    assert counting.commits - before == transactions


class SignerFailingOnce:
    """A signer whose first signature fails (a fault in the middle of an attempt)."""

    key_id = SIGNER.key_id

    def __init__(self):
        self.failed = False

    def sign_text(self, text):
        if not self.failed:
            self.failed = True
            raise RuntimeError("the signing service hiccuped")
        return SIGNER.sign_text(text)

    def published(self):
        return SIGNER.published()


def test_a_start_whose_first_attempts_raise_stores_the_run_alone_then_drives_it(caplog):
    """The failure rolls back the attempts, not the start: the run is stored and driven as usual."""
    graph = GraphBuilder("g").action("a", "set", arguments={"values": {"a": 1}}).end("done")
    graph = graph.chain("a", "done").build()
    counting = Counting(MemoryStore().unit_of_work)
    signer = SignerFailingOnce()
    ecp = Ecp.build(counting, signer=signer)
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    before = counting.commits
    run, created = ecp.runs.start_and_drive("t", StartRunRequest(deployment_ref="d"))
    assert signer.failed
    assert created
    assert run.status is RunStatus.COMPLETED
    assert [e.node_id for e in ecp.audit.timeline("t", run.run_id).entries] == ["a", "done"]
    assert counting.commits - before == 2  # the start alone, then one drive through both nodes
    assert "run started without its first attempts" in caplog.text


def test_a_repeated_start_and_drive_returns_the_first_run_without_attempting_it_again():
    ecp, counting, _ = world([None, 1])  # a pure set, then an action with effects
    request = StartRunRequest(deployment_ref="d", idempotency_key="k")
    first, created = ecp.runs.start_and_drive("t", request)
    before = counting.commits
    again, created_again = ecp.runs.start_and_drive("t", request)
    assert (created, created_again) == (True, False)
    assert again == first
    assert again.status is RunStatus.COMPLETED
    assert counting.commits == before  # nothing committed: the run had ended
    assert len(ecp.audit.timeline("t", first.run_id).entries) == 3
