"""Rendering the hosted pages: Jinja2 templates with autoescaping, and the headers every page sends.

Pages carry no script. The Content-Security-Policy is CONTRACT "Hosted offer"'s, so a page can load
only its own stylesheet and images and post forms only to this origin; pages are never framed or
cached (they show account state, and once a key).
"""

import importlib.resources
from typing import Any

import jinja2
from starlette.responses import HTMLResponse, Response

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Sent with every page."""

STYLESHEET_PATH = "/static/ecp.css"

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("ecp_http.server.pages", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render(template: str, **context: Any) -> str:  # noqa: ANN401
    """``template`` rendered with ``context``, every value escaped."""
    return _templates.get_template(template).render(**context)


def page(template: str, *, status: int = 200, **context: Any) -> HTMLResponse:  # noqa: ANN401
    """``template`` rendered with ``context`` (every value escaped), with the page headers."""
    return HTMLResponse(render(template, **context), status_code=status, headers=PAGE_HEADERS)


def static_file(name: str, media_type: str) -> Response:
    """A file the wheel ships in ``static/`` (cacheable: it holds nothing of any account)."""
    text = (
        importlib.resources.files("ecp_http.server.pages")
        .joinpath(f"static/{name}")
        .read_text("utf-8")
    )
    headers = {"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}
    return Response(text, media_type=f"{media_type}; charset=utf-8", headers=headers)


def stylesheet(name: str = "ecp.css") -> Response:
    """A stylesheet the wheel ships in ``static/``."""
    return static_file(name, "text/css")


def script(name: str) -> Response:
    """A script the wheel ships in ``static/`` (cacheable: it holds nothing of any account)."""
    return static_file(name, "text/javascript")


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "PAGE_HEADERS",
    "STYLESHEET_PATH",
    "page",
    "render",
    "script",
    "static_file",
    "stylesheet",
]
