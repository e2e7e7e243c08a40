"""Runs: dispatch, request limits, escalation, webhooks, the scheduler, artifacts, retention.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

import pathlib
import socket

from ecp_core.transparency.notes import COSIGNATURE, NoteError, NoteKey
from ecp_http.config.table.parsers import ttl_seconds
from ecp_http.config.values import Setting, SettingsError, flag, number, path, whole

DISPATCH_WORKERS: Setting[int] = Setting(
    name="ECP_DISPATCH_WORKERS",
    parse=whole(1),
    default=2,
    description="run-dispatch threads per process (claims use `SKIP LOCKED`; processes may share a database)",
    shown_default="`2`",
)

AUDIT_VERIFY_CONNECTIONS: Setting[int] = Setting(
    name="ECP_AUDIT_VERIFY_CONNECTIONS",
    parse=whole(1),
    default=4,
    description=(
        "pooled connections audit verifications hold at once per process, all requests together (ADR "
        "0061); the pool holds `max(4, ECP_DISPATCH_WORKERS + 8)`, so keep it well below that"
    ),
    shown_default="`4`",
)

DISPATCH_POLL_SECONDS: Setting[float] = Setting(
    name="ECP_DISPATCH_POLL_SECONDS",
    parse=number(0.01),
    default=0.2,
    description=(
        "how often an idle worker looks for runnable runs while the notification listener is "
        "away, or while a run it left claimable may come due (ADR 0099); with the listener "
        "connected and nothing pending, a notification wakes it and one worker looks every "
        "10 s as a safety net"
    ),
    shown_default="`0.2`",
)

TIMER_POLL_SECONDS: Setting[float] = Setting(
    name="ECP_TIMER_POLL_SECONDS",
    parse=number(0.01),
    default=0.25,
    description=(
        "how often, at least, each server process looks for wait nodes whose time came while "
        "the notification listener is away (ADR 0078, 0099); otherwise it sleeps until the "
        "earliest due time it knows of, woken when a run starts to wait"
    ),
    shown_default="`0.25`",
)

DISPATCH_NOTIFY: Setting[bool] = Setting(
    name="ECP_DISPATCH_NOTIFY",
    parse=flag,
    default=True,
    description=(
        "PostgreSQL `LISTEN/NOTIFY` wakes the run workers, `Prefer: wait` and webhook delivery of "
        "every server process on the database at once; polling stays the fallback (a lost notification"
        " or listener costs at most one poll interval; the listener reconnects by itself). `false`: "
        "poll only (ADR 0063)"
    ),
    shown_default="`true`",
)

START_BATCHING: Setting[bool] = Setting(
    name="ECP_START_BATCHING",
    parse=flag,
    default=False,
    description=(
        "`true`: on PostgreSQL, run starts that arrive together share one transaction, each in "
        "a savepoint of its own, and are answered once it commits; a run worker takes every "
        "`Prefer: wait` start waiting for it (up to 32) at once (ADR 0102, 0106). Fewer commits "
        "than runs under load, but measured no faster (PostgreSQL already shares a flush among "
        "concurrent commits) and with a longer p99. Default: every start commits on its own"
    ),
    shown_default="`false`",
)

RESOLUTION_BATCHING: Setting[bool] = Setting(
    name="ECP_RESOLUTION_BATCHING",
    parse=flag,
    default=False,
    description=(
        "`true`: on PostgreSQL, approval resolutions that arrive together share one transaction, "
        "each in a savepoint of its own, and are answered once it commits (ADR 0107); a resolved "
        "run's next attempt with side effects then runs after that commit, not in it. With "
        "`ECP_START_BATCHING`, a run that waits for one approval costs less than one commit under "
        "load. Default: every resolution commits on its own"
    ),
    shown_default="`false`",
)

DISPATCH_MAX_ATTEMPTS: Setting[int] = Setting(
    name="ECP_DISPATCH_MAX_ATTEMPTS",
    parse=whole(1),
    default=3,
    description=(
        "dispatches of one run that may raise in a row before it ends `failed` with `dispatch_error` "
        "(ADR 0019)"
    ),
    shown_default="`3`",
)

DISPATCH_BACKOFF_SECONDS: Setting[float] = Setting(
    name="ECP_DISPATCH_BACKOFF_SECONDS",
    parse=number(0),
    default=1.0,
    description="wait after a run's first failed dispatch, doubling with each further one (at most 300 s)",
    shown_default="`1`",
)

MAX_WAIT_SECONDS: Setting[float] = Setting(
    name="ECP_MAX_WAIT_SECONDS",
    parse=number(0),
    default=60.0,
    description="cap on `Prefer: wait=N`",
    shown_default="`60`",
)

MAX_BODY_BYTES: Setting[int] = Setting(
    name="ECP_MAX_BODY_BYTES",
    parse=whole(1024),
    default=1024 * 1024,
    description=(
        "largest request body (1 MiB); larger is 413 `payload_too_large`, read no further than the cap"
        " (ADR 0020)"
    ),
    shown_default="`1048576`",
)

MAX_EVIDENCE_BODY_BYTES: Setting[int] = Setting(
    name="ECP_MAX_EVIDENCE_BODY_BYTES",
    parse=whole(1024),
    default=16 * 1024 * 1024,
    description="largest evidence batch body (16 MiB)",
    shown_default="`16777216`",
)

ESCALATION_INTERVAL_SECONDS: Setting[float] = Setting(
    name="ECP_ESCALATION_INTERVAL_SECONDS",
    parse=number(0.1),
    default=30.0,
    description="how often overdue approvals are escalated",
    shown_default="`30`",
)

WEBHOOK_MAX_ATTEMPTS: Setting[int] = Setting(
    name="ECP_WEBHOOK_MAX_ATTEMPTS",
    parse=whole(1),
    default=5,
    description="attempts before a delivery becomes a dead letter",
    shown_default="`5`",
)

WEBHOOK_BACKOFF_BASE_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_BACKOFF_BASE_SECONDS",
    parse=number(0.01),
    default=2.0,
    description="first retry waits 1–2 s, then doubling (equal jitter)",  # noqa: RUF001
    shown_default="`2`",
)

WEBHOOK_BACKOFF_MAX_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_BACKOFF_MAX_SECONDS",
    parse=number(0.01),
    default=3600.0,
    description="cap on one wait (and on an honoured `Retry-After`)",
    shown_default="`3600`",
)

WEBHOOK_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=10.0,
    description="per-request timeout",
    shown_default="`10`",
)

WEBHOOK_ALLOW_PRIVATE_TARGETS: Setting[bool] = Setting(
    name="ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS",
    parse=flag,
    default=False,
    description=(
        "allow loopback and private (RFC 1918, `fc00::/7`) targets; link-local, metadata, shared, "
        "site-local, multicast and reserved addresses are always refused, in any IPv4-mapped, 6to4 or "
        "NAT64 form (ADR 0016)"
    ),
    shown_default="`false`",
)

WEBHOOK_POLL_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_POLL_SECONDS",
    parse=number(0.01),
    default=0.1,
    description=(
        "how often the delivery worker looks for due deliveries while the notification "
        "listener is away (ADR 0099); otherwise a notification wakes it, and after an attempt "
        "it sleeps until the next retry is due"
    ),
    shown_default="`0.1`",
)

SCHEDULER_ENABLED: Setting[bool] = Setting(
    name="ECP_CLOUD_SCHEDULER_ENABLED",
    parse=flag,
    default=True,
    description=(
        "run decision schedules in this process (`/health/ready` answers 503 while the enabled "
        "scheduler task is not alive)"
    ),
    shown_default="`true`",
)

SCHEDULER_INTERVAL_SECONDS: Setting[float] = Setting(
    name="ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS",
    parse=number(0.05),
    default=60.0,
    description="how often the scheduler looks for due schedule occurrences",
    shown_default="`60`",
)

ARTIFACTS_DIR: Setting[pathlib.Path | None] = Setting(
    name="ECP_ARTIFACTS_DIR",
    parse=path,
    default=None,
    description="where run artifacts live (erasure cleans them)",
    shown_default="`$ECP_DATA_DIR/artifacts`",
)

RETENTION_ENABLED: Setting[bool] = Setting(
    name="SERVICE_RETENTION__ENABLED",
    parse=flag,
    default=False,
    description="run the TTL purge",
    shown_default="`false`",
)

RETENTION_POLL_SECONDS: Setting[float] = Setting(
    name="SERVICE_RETENTION__WORKER_POLL_INTERVAL",
    parse=number(1),
    default=300.0,
    description="seconds between purge sweeps",
    shown_default="`300`",
)

RETENTION_DEFAULT_AUDIT_TTL_SECONDS: Setting[int | None] = Setting(
    name="SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS",
    parse=ttl_seconds,
    default=None,
    description="configured default audit TTL (see ADR 0011 for the resolution order)",
)

RETENTION_DEFAULT_RUN_TTL_SECONDS: Setting[int | None] = Setting(
    name="SERVICE_RETENTION__DEFAULT_RUN_TTL_SECONDS",
    parse=ttl_seconds,
    default=None,
    description="configured default run TTL",
)

RETENTION_ECON_ERASE_ENABLED: Setting[bool] = Setting(
    name="SERVICE_RETENTION__ECON_ERASE_ENABLED",
    parse=flag,
    default=False,
    description="erase economic events by join key during erasure",
    shown_default="`false`",
)

LOG_CHECKPOINT_SECONDS: Setting[float] = Setting(
    name="ECP_LOG_CHECKPOINT_SECONDS",
    parse=number(0.05),
    default=1.0,
    description=(
        "how often each server process appends committed audit records to their tenant's "
        "transparency log and signs a checkpoint (ADR 0086): a record is in a checkpoint within "
        "about this long of its commit"
    ),
    shown_default="`1`",
)


def log_origin(name: str, raw: str) -> str:
    """A log origin: printable ASCII with no spaces or ``+`` (it names the checkpoints' key)."""
    value = raw.strip()
    if not value.isascii() or not value.isprintable() or " " in value or "+" in value:
        raise SettingsError(
            f"{name} is printable ASCII with no spaces or '+', like ecp.example.com"
        )
    return value.rstrip("/")


LOG_ORIGIN: Setting[str] = Setting(
    name="ECP_LOG_ORIGIN",
    parse=log_origin,
    default=socket.gethostname() or "ecp.localhost",
    description=(
        "the origin of the transparency logs' checkpoints, a schema-less URL such as "
        "`ecp.example.com`; each tenant's log is `<origin>/<tenant id>` (ADR 0086)"
    ),
    shown_default="the host's name",
)


def log_witnesses(name: str, raw: str) -> tuple[tuple[str, str], ...]:
    """``URL=VKEY`` pairs, comma separated: each witness's address and cosignature key."""
    found = []
    for entry in filter(None, (part.strip() for part in raw.split(","))):
        url, equals, vkey = entry.partition("=")
        if not equals or not url.startswith(("http://", "https://")) or not vkey:
            raise SettingsError(f"{name}: each entry is https://witness.example=<its verifier key>")
        try:
            key = NoteKey.from_vkey(vkey)
        except NoteError as exc:
            raise SettingsError(f"{name}: {url}'s key: {exc}") from None
        if key.kind != COSIGNATURE:
            raise SettingsError(f"{name}: {url}'s key is not a cosignature key (type 0x04)")
        found.append((url, vkey))
    return tuple(found)


LOG_WITNESSES: Setting[tuple[tuple[str, str], ...]] = Setting(
    name="ECP_LOG_WITNESSES",
    parse=log_witnesses,
    default=(),
    description=(
        "witnesses that cosign each new checkpoint, as `URL=VKEY` pairs, comma separated (the "
        "witness's base URL and its cosignature verifier key, which `ecp witness` prints); "
        "their cosignatures are published with the checkpoint (ADR 0086)"
    ),
)
