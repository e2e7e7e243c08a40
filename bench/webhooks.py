"""Webhook delivery: deliveries per second to a local receiver, and the delay from a run's state
change to the first delivery attempt (target p99 under 1 s).

Run as ``python bench/webhooks.py [--runs N]``. The database is ``ECP_BENCH_DATABASE_URL`` (a
maintenance database) when set, else an embedded PostgreSQL in a temporary directory. Runs are
advanced by the dispatcher and events delivered by the delivery sweep, wired as ``ecp serve``
wires them (ECP_WEBHOOK_POLL_SECONDS 0.1, woken by LISTEN/NOTIFY when a delivery is queued, ADR
0063; ``--poll-only`` leaves the listener out). Prints figures; asserts nothing about timing.
"""

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from _rounds import percentile
from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule
from ecp_core.webhooks.model import WebhookEventType
from ecp_http.background.dispatch import Dispatcher
from ecp_http.background.wakeups import DELIVERY_SWEEP, wakeup_listener
from ecp_http.outbound.webhook_sender import HttpxSender
from ecp_http.server.long_poll import Bell
from ecp_postgres import (
    EmbeddedPostgres,
    PostgresStore,
    apply_migrations,
    create_database,
    drop_database,
)
from ecp_postgres.notifications import NotificationListener

ARRIVALS: list[tuple[float, dict]] = []
LOCK = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        arrived = time.time()
        with LOCK:
            ARRIVALS.append((arrived, json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_args) -> None:
        return


def started_workers(
    ecp: Ecp, url: str, deliver: Callable[[], None], *, poll_only: bool
) -> tuple[Dispatcher, NotificationListener]:
    """The dispatcher with the delivery sweep, and (unless ``poll_only``) the listener, started."""
    dispatcher = Dispatcher(
        ecp.runs, workers=2, poll_seconds=0.05, sweeps=[(DELIVERY_SWEEP, deliver, 0.1)]
    )
    listener = wakeup_listener(url, dispatcher=dispatcher, runs_moved=Bell(), tasks_offered=Bell())
    dispatcher.start()
    if not poll_only:
        listener.start()
        listener.wait_connected(30)
    return dispatcher, listener


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--poll-only", action="store_true", help="no LISTEN/NOTIFY wake-ups")
    args = parser.parse_args()
    server = None
    base_url = os.environ.get("ECP_BENCH_DATABASE_URL")
    if not base_url:
        server = EmbeddedPostgres(tempfile.mkdtemp(prefix="ecp-bench-hooks-"))
        base_url = server.start()
    name = f"ecp_bench_hooks_{os.getpid()}"
    url = create_database(base_url, name)
    apply_migrations(url)
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    target = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    try:
        with PostgresStore(url, max_size=8) as store:
            ecp = Ecp.build(
                store.unit_of_work, signer=Ed25519Signer.generate(), webhook_retry=RetrySchedule()
            )
            graph = (
                GraphBuilder("g")
                .action("a", "set", arguments={"values": {"x": 1}})
                .end("b")
                .chain("a", "b")
                .build()
            )
            ecp.graphs.register("bench", graph)
            ecp.graphs.deploy("bench", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
            admin = ActorIdentity(subject="bench", auth_method=AuthMethod.BEARER, tenant_id="bench")
            ecp.webhooks.subscribe(
                admin,
                CreateSubscriptionRequest(
                    deployment_ref="d",
                    target_url=target,
                    event_types=(WebhookEventType.RUN_COMPLETED,),
                ),
            )
            sender = HttpxSender(timeout_seconds=10, allow_private=True)

            def deliver() -> None:
                for _ in range(20):
                    if ecp.webhooks.deliver_due(sender) == 0:
                        return

            dispatcher, listener = started_workers(ecp, url, deliver, poll_only=args.poll_only)
            started = time.time()
            for _ in range(args.runs):
                ecp.runs.start("bench", StartRunRequest(deployment_ref="d"))
            deadline = time.monotonic() + 120
            while len(ARRIVALS) < args.runs and time.monotonic() < deadline:
                time.sleep(0.05)
            listener.stop()
            dispatcher.stop()
            finished = time.time()
    finally:
        receiver.shutdown()
        drop_database(base_url, name)
        if server is not None:
            server.stop()
    delays = [
        arrived - datetime.fromisoformat(payload["occurred_at"]).timestamp()
        for arrived, payload in ARRIVALS
    ]
    print(
        f"webhook delivery benchmark: {args.runs} runs, {len(ARRIVALS)} run.completed events delivered"
        f" ({'polling only' if args.poll_only else 'woken by LISTEN/NOTIFY'})"
    )
    print(
        f"  deliveries/s (first start to last arrival)   {len(ARRIVALS) / (finished - started):8.1f}"
    )
    if delays:
        p99 = percentile(delays, 0.99)
        print(
            f"  delay state change -> first attempt, median {statistics.median(delays) * 1000:8.1f} ms"
        )
        print(
            f"  delay state change -> first attempt, p99    {p99 * 1000:8.1f} ms  (target < 1000 ms: {'met' if p99 < 1 else 'not met'})"
        )
    print(f"  duplicates: {len(ARRIVALS) - len({p['event_id'] for _, p in ARRIVALS})}")


if __name__ == "__main__":
    main()
