"""A separate process that drives one run on PostgreSQL; the crash test kills it mid-run.

Usage: python crash_worker.py DATABASE_URL RUN_ID MARKER_DIR [block]
With ``block``, the ``slow`` action touches MARKER_DIR/reached and then sleeps until killed.
"""

import pathlib
import sys
import time

from ecp_core import ActionRegistry, Ecp, Ed25519Signer
from ecp_postgres import PostgresStore

SEED = bytes(range(2, 34))


def slow_action(marker_dir: pathlib.Path, block: bool):
    def run(context):
        if block:
            (marker_dir / "reached").touch()
            time.sleep(3600)
        return {"slow_done": True, "seen": context.state.get("fast_done")}

    return run


def main() -> None:
    url, run_id, marker_dir = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    block = len(sys.argv) > 4 and sys.argv[4] == "block"
    actions = ActionRegistry()
    actions.register("slow", slow_action(marker_dir, block))
    # Unknown side effects: the attempt commits on its own before ``slow`` (ADR 0059).
    actions.register("stamp", lambda context: {"fast_done": True})
    with PostgresStore(url, max_size=2) as store:
        ecp = Ecp.build(
            store.unit_of_work, signer=Ed25519Signer(SEED, key_id="crash"), actions=actions
        )
        run = ecp.runs.drive("t", run_id)
        sys.stdout.write(run.status.value + "\n")


if __name__ == "__main__":
    main()
