"""Worker functions that the e2e tests run under ``ecp worker`` (``tests.support.task_functions:…``).

They talk to the test through files in ``$ECP_TEST_MARKERS``: a function that must be caught in
the middle of its work writes ``<task_id>.json`` (the claim, lock token included) and then waits
for ``<task_id>.release`` (or forever).
"""

import json
import os
import pathlib
import time
from decimal import Decimal

from ecp_client.models import ClaimedTask


def _markers() -> pathlib.Path:
    return pathlib.Path(os.environ["ECP_TEST_MARKERS"])


def _announce(task: ClaimedTask) -> None:
    """Write the claim where the test looks, whole or not at all."""
    claim = {
        "task_id": task.task_id,
        "run_id": task.run_id,
        "attempt": task.attempt,
        "lock_token": task.lock_token,
    }
    partial = _markers() / f"{task.task_id}.partial"
    partial.write_text(json.dumps(claim), encoding="utf-8")
    partial.rename(_markers() / f"{task.task_id}.json")


def charge(task: ClaimedTask) -> dict[str, object]:
    """Complete at once: the charge, in Decimal, and who made it."""
    amount = Decimal(task.arguments["amount"])
    by = os.environ["ECP_TEST_WORKER"]
    return {"charged": amount, "charged_by": by, "charged_order": task.state.get("order")}


def hold(task: ClaimedTask) -> dict[str, object]:
    """Announce the claim, then block (the test kills this worker)."""
    _announce(task)
    while True:
        time.sleep(1)


def hold_until_released(task: ClaimedTask) -> dict[str, object]:
    """Announce the claim, wait for the test's release file, then complete."""
    _announce(task)
    while not (_markers() / f"{task.task_id}.release").exists():
        time.sleep(0.05)
    return {"released": True}


def misbehave(task: ClaimedTask) -> object:
    """Raise on odd attempts; return a list (not an object) on even ones."""
    if task.attempt % 2:
        raise ValueError(f"card declined for {task.arguments['amount']}")
    return ["not", "an", "object"]
