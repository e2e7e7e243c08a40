"""Attempts that change nothing outside the run share a transaction; one with effects ends it.

ADR 0059: after an attempt of a structural node or of an action registered with
``side_effect: none``, the next attempt joins the same unit of work; an action with effects (or
unknown ones) is the last attempt before the commit.
"""

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
from ecp_core.runs.service import CHAINED_ATTEMPTS
from ecp_core.types import RunStatus, SideEffectClass

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
