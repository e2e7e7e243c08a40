"""``ecp worker``: the command line of the external-task worker (:mod:`ecp_client.worker`).

It runs the client library's loop and talks only to the service's HTTP API (``--url`` or ``ECP_URL``) with ``ECP_API_KEY`` or
``ECP_TOKEN``; it never opens the database. A refusal (no credentials, a function that cannot be
imported, a claim the server refuses) is one line on stderr and exit status 2.
"""

import argparse
import importlib
import logging
import os
import pathlib
import socket
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ecp_http.cli.api_client import add_url_option, credential_headers, service_url
from ecp_http.cli.args import whole_number
from ecp_http.config.table.client import API_KEY, TOKEN

if TYPE_CHECKING:
    from ecp_client.worker import TaskFunction


def load_function(spec: str) -> "TaskFunction":
    """The callable named by ``module:function``, importable from here or ``PYTHONPATH``."""
    from ecp_client.worker import WorkerRefused  # noqa: PLC0415 - when the command runs

    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise WorkerRefused(f"{spec!r} is not module:function")
    here = str(pathlib.Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)  # as `python -m` does: modules beside you import
    try:
        found: object = importlib.import_module(module_name)
        for part in name.split("."):
            found = getattr(found, part)
    except Exception as exc:  # noqa: BLE001 - any import failure is reported, not raised
        raise WorkerRefused(f"cannot load {spec}: {type(exc).__name__}: {exc}") from None
    if not callable(found):
        raise WorkerRefused(f"{spec} is not callable")
    function: TaskFunction = found
    return function


def _credentials(environ: Mapping[str, str]) -> dict[str, str]:
    from ecp_client.worker import WorkerRefused  # noqa: PLC0415 - when the command runs

    headers = credential_headers(environ)
    if headers is None:
        raise WorkerRefused(
            f"set {API_KEY.name} (a project API key with role worker) or {TOKEN.name}"
        )
    return headers


def _work(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    from ecp_client.worker import TaskWorker, WorkerOptions, WorkerRefused  # noqa: PLC0415
    from ecp_http import logs  # noqa: PLC0415 - imported when the command runs (ADR 0053)

    try:
        headers = _credentials(environ)
        function = load_function(args.function)
        logs.configure()
        logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request
        options = WorkerOptions(
            url=service_url(args, environ),
            topics=tuple(dict.fromkeys(args.topic)),
            worker_id=args.worker_id or f"{socket.gethostname()}-{os.getpid()}",
            lock_seconds=args.lock_seconds,
            wait_seconds=args.wait_seconds,
            max_tasks=args.max_tasks,
            once=args.once,
        )
        return TaskWorker(options, function, headers=headers).run()
    except WorkerRefused as exc:
        sys.stderr.write(f"ecp worker: {exc}\n")
        return 2


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``worker`` to the ``ecp`` parser."""
    worker = commands.add_parser(
        "worker",
        help="run a Python function as a worker for task nodes",
        description="Claim tasks of the topics, run FUNCTION on each, complete or fail them. "
        "Credentials: ECP_API_KEY (a project API key with role worker) or ECP_TOKEN (a bearer "
        "token). SIGTERM or Ctrl-C stops claiming and exits after the current task.",
    )
    worker.add_argument(
        "function", metavar="FUNCTION", help="module:function, importable from here or PYTHONPATH"
    )
    add_url_option(worker)
    worker.add_argument(
        "--topic", action="append", required=True, help="a topic to claim; repeat for more"
    )
    worker.add_argument("--worker-id", help="this worker's id (default: <hostname>-<pid>)")
    worker.add_argument(
        "--lock-seconds",
        type=whole_number(1, 3600),
        help="how long a claim holds a task (default: the task node's lock_seconds)",
    )
    worker.add_argument(
        "--wait-seconds",
        type=whole_number(0, 30),
        default=20,
        help="how long one claim waits for a task to appear (default 20)",
    )
    worker.add_argument(
        "--max-tasks", type=whole_number(1, 100), default=1, help="tasks per claim (default 1)"
    )
    worker.add_argument(
        "--once", action="store_true", help="handle what one claim returns, then exit"
    )
    worker.set_defaults(handler=_work)
