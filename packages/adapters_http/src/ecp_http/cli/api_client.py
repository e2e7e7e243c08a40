"""The HTTP calls of the commands that talk to a running service (``bills``, ``runs``, ``approvals``).

They never open the database: the base URL comes from ``--url`` or ``ECP_URL`` (default
``http://127.0.0.1:8000``), the credentials from ``ECP_API_KEY`` (a project API key) or
``ECP_TOKEN`` (a bearer token). A problem the service answers, and a service that cannot be
reached, become :class:`CommandFailed` with a readable first line; no credentials at all is
:class:`CommandRefused`. ``httpx`` is imported when a request is made, so that ``ecp --help``
and the database commands do not pay for it.
"""

import argparse
import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ecp_http.cli.args import positive
from ecp_http.config.table.client import API_KEY, TOKEN, URL
from ecp_http.startup.exits import CommandFailed, CommandRefused

if TYPE_CHECKING:
    import httpx

TIMEOUT_SECONDS = 60.0
MAX_PAGE = 500
"""The largest page the service's listings give (``limit``)."""


def add_url_option(parser: argparse.ArgumentParser) -> None:
    """The ``--url`` option every API command takes."""
    parser.add_argument(
        "--url",
        default=None,
        help=f"the service's base URL (env {URL.name}; default {URL.default})",
    )


def service_url(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """The service's base URL: ``--url``, else ``ECP_URL``, else the default; no trailing slash."""
    given: str = getattr(args, "url", None) or URL.read(environ)
    return given.rstrip("/")


def credential_headers(environ: Mapping[str, str]) -> dict[str, str] | None:
    """``X-API-Key`` from ``ECP_API_KEY``, else ``Authorization: Bearer`` from ``ECP_TOKEN``."""
    if key := API_KEY.read(environ):
        return {"X-API-Key": key}
    if token := TOKEN.read(environ):
        return {"Authorization": f"Bearer {token}"}
    return None


def problem_text(status: int, body: str) -> str:
    """A problem+json answer (or any other) as a line, then each failing field indented."""
    try:
        problem = json.loads(body)
    except ValueError:
        return f"HTTP {status}: {body[:500]}"
    if not isinstance(problem, dict):
        return f"HTTP {status}"
    detail = problem.get("detail") or problem.get("title") or ""
    lines = [f"HTTP {status} {problem.get('code', '')}: {detail}"]
    for error in problem.get("errors") or []:
        where = ".".join(str(part) for part in error.get("loc", [])) or "(body)"
        lines.append(f"  {where}: {error.get('msg')}")
    return "\n".join(lines)


def api_path(template: str, *parts: str) -> str:
    """``template`` with each ``{}`` filled by one URL-quoted path segment."""
    return template.format(*(urllib.parse.quote(part, safe="") for part in parts))


def next_cursor(response: "httpx.Response") -> str | None:
    """The cursor of the ``Link: <...>; rel="next"`` header, or None on the last page."""
    url = response.links.get("next", {}).get("url")
    if not url:
        return None
    cursors = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("cursor")
    return cursors[0] if cursors else None


@attrs.frozen
class Api:
    """The service at ``base_url``, called with ``headers``."""

    base_url: str
    headers: Mapping[str, str]

    @classmethod
    def from_args(cls, args: argparse.Namespace, environ: Mapping[str, str], *, who: str) -> "Api":
        """The service named by ``--url`` (else ``ECP_URL``) with the environment's credentials.

        ``who`` says whose credentials the command needs, for the refusal when there are none.
        """
        headers = credential_headers(environ)
        if headers is None:
            raise CommandRefused(
                f"no credentials: set {TOKEN.name} (a bearer token) or {API_KEY.name} (a project "
                f"API key); {who}"
            )
        return cls(base_url=service_url(args, environ), headers=headers)

    def send(self, method: str, target: str, **kwargs: Any) -> "httpx.Response":  # noqa: ANN401
        """The service's answer; CommandFailed when it cannot be reached or answers >= 400."""
        import httpx  # noqa: PLC0415 - only the commands that call the service pay for it

        try:
            with httpx.Client(
                base_url=self.base_url, headers=dict(self.headers), timeout=TIMEOUT_SECONDS
            ) as client:
                response = client.request(method, target, **kwargs)
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            msg = f"cannot reach the service at {self.base_url} ({reason}); is it running?"
            raise CommandFailed(msg) from None
        except ValueError as exc:  # a URL httpx cannot use
            raise CommandRefused(f"{self.base_url} is not a usable URL: {exc}") from None
        if response.status_code >= 400:  # noqa: PLR2004
            raise CommandFailed(problem_text(response.status_code, response.text))
        return response

    def json(self, method: str, target: str, **kwargs: Any) -> Any:  # noqa: ANN401
        """The service's JSON answer (see :meth:`send`)."""
        return self.send(method, target, **kwargs).json()


Page = tuple[list[dict[str, Any]], str | None]
"""One page of a listing: its items and the cursor of the next page (None on the last)."""


def add_page_options(parser: argparse.ArgumentParser, noun: str) -> None:
    """``--limit``, ``--all`` and ``--cursor`` of a command that lists ``noun``."""
    parser.add_argument(
        "--limit",
        type=positive,
        default=50,
        help=f"at most this many {noun} (default 50); pages are fetched as needed",
    )
    parser.add_argument(
        "--all", action="store_true", help=f"every {noun}, however many pages that takes"
    )
    parser.add_argument(
        "--cursor", default=None, help="start after this cursor (printed when more remain)"
    )


def gather(fetch: Callable[[int, str | None], Page], args: argparse.Namespace) -> Page:
    """Items of consecutive pages from ``args.cursor`` until ``args.limit`` (or ``--all``)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = args.cursor
    while True:
        wanted = MAX_PAGE if args.all else min(MAX_PAGE, args.limit - len(items))
        page, cursor = fetch(wanted, cursor)
        items.extend(page)
        if cursor is None or not page or (not args.all and len(items) >= args.limit):
            return items, cursor
