"""Concurrent connector tests on PostgreSQL never commit, nor even reserve, more than the cap.

Sixteen threads each test a model connector whose worst case is 0.4 USD under a 2.00 USD run
cap, against the real loopback stand-in provider. The stand-in answers with exactly the
worst-case usage, so every test that was let through commits 0.4: at most five can ever fit.
"""

import concurrent.futures
import threading
from decimal import Decimal

import pytest
from starlette.testclient import TestClient
from tests.support.connectors import auth, settings, standin

from ecp_core.connectors.model import ConnectorTestRequest
from ecp_core.connectors.trials import TrialOutcome
from ecp_core.identity import ActorIdentity
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.outbound.model_calls.standin import Reply
from ecp_http.startup.app import create_app
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

ACTOR = ActorIdentity(
    subject="ops", auth_method=AuthMethod.BEARER, roles=(ServiceRole.OPERATOR,), tenant_id="acme"
)


def race(count, call):
    start = threading.Barrier(count)

    def one(n):
        start.wait(10)
        return call(n)

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


@pytest.mark.spec("§2.6 connector-test-cost-caps")
@pytest.mark.parametrize("answer_tokens", [(64, 16), (10, 5)])
def test_sixteen_concurrent_tests_never_commit_more_than_the_cap(
    tmp_path, fresh_database, answer_tokens
):
    """Worst-case answers: exactly five fit, and 2.00 is committed. Cheaper answers (0.1 each)
    free room as they finish, so more may pass; the cap and the ledger hold either way."""
    with standin() as models, PostgresStore(fresh_database, max_size=4) as store:
        reserved_seen = []

        def answer(body):
            # Whatever is reserved while a call runs stays within the cap as well.
            with store.unit_of_work() as tx:
                scope = tx.connector_costs.scope("acme", "c1", "r1")
            reserved_seen.append(scope.committed_usd + scope.reserved_usd)
            return Reply("OK", input_tokens=answer_tokens[0], output_tokens=answer_tokens[1])

        models.respond("fast", answer)
        app = create_app(settings(tmp_path, models.url, ECP_DATABASE_URL=fresh_database))
        with TestClient(app) as client:
            ecp = app.state.runtime.ecp

            def test(n):
                request = ConnectorTestRequest(
                    campaign_id="c1",
                    operation_id=f"op-{n}",
                    max_cost_usd="0.4",
                    run_cap_usd="2.00",
                    run_id="r1",
                )
                return ecp.connector_tests.test(ACTOR, "env-model", request)

            results = race(16, test)
            report = client.get(
                "/v1/connector-costs",
                params={"campaign_id": "c1", "run_id": "r1", "limit": 500},
                headers=auth("operator"),
            ).json()
    passed = [r for r in results if r.outcome is TrialOutcome.OK]
    refused = [r for r in results if r.outcome is TrialOutcome.REFUSED]
    assert len(passed) + len(refused) == 16
    assert models.calls("fast") == len(passed)  # a refused test never calls
    committed = Decimal(report["committed_usd"])
    assert committed <= Decimal("2.00")
    assert Decimal(report["reserved_usd"]) == 0
    assert all(seen <= Decimal("2.00") for seen in reserved_seen)
    ledger = [Decimal(entry["amount_usd"]) for entry in report["entries"]]
    assert len(ledger) == len(passed)
    assert sum(ledger, Decimal(0)) == committed
    each = Decimal("0.4") if answer_tokens == (64, 16) else Decimal("0.1")
    assert committed == each * len(passed)
    if answer_tokens == (64, 16):
        assert (len(passed), committed) == (5, Decimal("2.0"))
    for result in refused:
        assert "run_cap_usd" in result.response.detail
        assert result.response.cost_event_id is None
