"""A separate process that races for due decision schedules on PostgreSQL.

Usage: python schedule_worker.py DATABASE_URL

It opens its own PostgresStore and ``Ecp`` (system clock and ids), prints ``ready``, then for
every line ``go`` on standard input reads which schedules are due, calls
``ecp.decisions.run_due()`` and prints one JSON line ``{"saw": [...], "ran": [...]}``: the due
schedule ids it read just before, and the ids ``run_due`` reports it ran. It ends with its input.
"""

import json
import sys

from ecp_core import Ecp
from ecp_core.system import SystemClock
from ecp_postgres import PostgresStore


def main() -> None:
    url = sys.argv[1]
    with PostgresStore(url, min_size=2, max_size=2) as store:
        store.pool.wait()
        ecp = Ecp.build(store.unit_of_work, signer=None)
        clock = SystemClock()
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        for line in sys.stdin:
            if line.strip() != "go":
                continue
            with store.unit_of_work() as uow:
                saw = [s.schedule_id for s in uow.decisions.due(clock.now(), limit=100)]
            ran = ecp.decisions.run_due(limit=100)
            sys.stdout.write(json.dumps({"saw": saw, "ran": ran}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
