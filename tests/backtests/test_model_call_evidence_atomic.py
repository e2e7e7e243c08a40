"""``model_call``'s evidence commits or rolls back with the attempt that made it (ADR 0098).

On PostgreSQL, through the stand-in provider on loopback: a deferred constraint trigger the
test installs makes the attempt's commit fail after the model answered, after the evidence was
written; the database refuses the commit as it would any other failure at that point.
"""

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.backtests import NO_RETRY

from ecp_core import CreateDeploymentRequest, Ecp, StartRunRequest, structure
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.signing import Ed25519Signer
from ecp_core.types import RunStatus
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.model_call import attach_model_call, register_model_call
from ecp_http.outbound.model_calls.providers import catalog_models
from ecp_http.outbound.model_calls.standin import Reply, StandinModels
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

RULE = "C19 model-call-evidence-atomic"
TENANT = "acme"

FAULT = """
CREATE FUNCTION test_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the test refuses this commit';
END $$;
"""
FAULT_ON = """
CREATE CONSTRAINT TRIGGER test_refuse_commit AFTER INSERT ON ecp_audit_records
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_commit()
"""
FAULT_OFF = "DROP TRIGGER IF EXISTS test_refuse_commit ON ecp_audit_records"


def model_node(node_id: str) -> dict:
    return {
        "id": node_id,
        "kind": "action",
        "action": {
            "name": "model_call",
            "fingerprint": "model_call/1",
            "capability_refs": ["network_write", "external_api_call"],
            "arguments": {
                "model": "fast",
                "messages": [{"role": "user", "content": f"Say {node_id}."}],
                "max_tokens": 8,
            },
        },
    }


GRAPH = {
    "graph_id": "asker",
    "entry": "first",
    "nodes": [model_node("first"), model_node("second"), {"id": "done", "kind": "end"}],
    "edges": [
        {"source": "first", "target": "second"},
        {"source": "second", "target": "done"},
    ],
}


class World:
    """An Ecp on PostgreSQL whose ``model_call`` calls the stand-in; commits can be refused."""

    def __init__(self, url: str, standin: StandinModels) -> None:
        self.url = url
        self.store = PostgresStore(url, min_size=1, max_size=4)
        catalog = {"fast": standin.entry("fast", input_price="1", output_price="2")}
        registry = ActionRegistry()
        register_model_call(
            registry,
            catalog_models(catalog, ActionSecrets({}, None), policy=NO_RETRY),
            timeout_seconds=5,
        )
        self.ecp = Ecp.build(
            self.store.unit_of_work, signer=Ed25519Signer.generate(), actions=registry
        )
        attach_model_call(registry, self.ecp.runs.get, self.ecp.record_executions_in)
        self.standin = standin
        standin.respond("fast", lambda body: Reply("ok", input_tokens=10, output_tokens=1))
        self.ecp.graphs.register(TENANT, structure(GRAPH, GraphDefinition))
        self.ecp.graphs.deploy(
            TENANT, CreateDeploymentRequest(deployment_ref="ask", graph_id="asker")
        )
        self._sql(FAULT)

    def _sql(self, statement: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement)

    def refuse_commits(self, *, refuse: bool) -> None:
        self._sql(FAULT_OFF)
        if refuse:
            self._sql(FAULT_ON)

    def evidence(self, run_id: str) -> list[str]:
        """The step ids of the run's stored execution events, oldest first."""
        with psycopg.connect(self.url) as conn:
            rows = conn.execute(
                "SELECT step_id FROM ecp_evidence_executions"
                " WHERE tenant_id = %s AND run_id = %s ORDER BY occurred_at",
                (TENANT, run_id),
            ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def world(fresh_database) -> Iterator[World]:
    with StandinModels() as standin:
        built = World(fresh_database, standin)
        try:
            yield built
        finally:
            built.close()


def start(world: World) -> str:
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="ask", input={}))
    return run.run_id


@pytest.mark.spec(RULE)
def test_a_rolled_back_attempt_leaves_no_evidence_and_its_retry_writes_one(world: World) -> None:
    run_id = start(world)
    world.refuse_commits(refuse=True)
    with pytest.raises(psycopg.Error, match="the test refuses this commit"):
        world.ecp.runs.advance(TENANT, run_id)
    assert world.standin.calls() == 1  # the model answered; its attempt did not commit
    assert world.evidence(run_id) == []
    world.refuse_commits(refuse=False)
    run = world.ecp.runs.advance(TENANT, run_id)
    assert run.next_node_id == "second"
    assert world.evidence(run_id) == ["first"]
    assert world.ecp.runs.drive(TENANT, run_id).status is RunStatus.COMPLETED
    assert world.evidence(run_id) == ["first", "second"]


@pytest.mark.spec(RULE)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(refused=st.lists(st.booleans(), max_size=6))
def test_every_committed_attempt_has_exactly_one_event(world: World, refused: list[bool]) -> None:
    """Whatever attempts fail to commit, each model call node that committed has one event.

    One world for every example (a new run each): the fixture's state is the database's.
    """
    run_id = start(world)
    committed: list[str] = []
    for refuse in [*refused, False, False, False]:
        run = world.ecp.runs.get(TENANT, run_id)
        if run.status is RunStatus.COMPLETED:
            break
        node = run.next_node_id or "first"
        world.refuse_commits(refuse=refuse)
        try:
            world.ecp.runs.advance(TENANT, run_id)
        except psycopg.Error:
            assert refuse
        else:
            committed.append(node)
        assert world.evidence(run_id) == [n for n in committed if n != "done"]
    world.refuse_commits(refuse=False)
    assert world.ecp.runs.get(TENANT, run_id).status is RunStatus.COMPLETED
    assert world.evidence(run_id) == ["first", "second"]


@pytest.mark.spec(RULE)
def test_no_model_is_called_when_its_evidence_could_not_be_stored() -> None:
    """Metered (hosted) and without a subscription: the call is refused before it is paid for."""
    with StandinModels() as standin:
        registry = ActionRegistry()
        catalog = {"fast": standin.entry("fast", input_price="1", output_price="2")}
        provider = catalog_models(catalog, ActionSecrets({}, None), policy=NO_RETRY)
        register_model_call(registry, provider, timeout_seconds=5)
        ecp = Ecp.in_memory(actions=registry, entitlements_enabled=True)
        attach_model_call(registry, ecp.runs.get, ecp.record_executions_in, ecp.evidence.admits)
        ecp.graphs.register(TENANT, structure(GRAPH, GraphDefinition))
        ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref="ask", graph_id="asker"))
        run, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref="ask", input={}))
        ended = ecp.runs.drive(TENANT, run.run_id)
        assert ended.status is RunStatus.FAILED
        assert ended.failure_state is not None
        assert "evidence_unrecorded: the model was not called" in ended.failure_state.message
        assert standin.calls() == 0
