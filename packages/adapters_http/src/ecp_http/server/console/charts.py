"""The console's charts: figures in, safe inline SVG out (pygal, ADR 0081 and 0085).

pygal draws the chart on the server with no scripts (``js=[]``). Its SVG is then parsed and
cleaned: the embedded ``<style>``, any ``<script>``, every ``style=`` and ``on*=`` attribute,
comments and the random element id are removed, so the page's Content-Security-Policy holds with
no exception and ``console.css`` colours pygal's classes (``.color-N``, ``.axis``, ``.guide``)
for the light and the dark scheme. A chart is a picture of a table the page prints beside it:
it carries ``role="img"`` and a label, never the only reading of a figure.

Money is :class:`~decimal.Decimal` everywhere else; only here, to place a bar, does a figure
become a float, and a figure no float can hold (or an unknown one) draws no bar.
"""

import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

import attrs
import pygal  # type: ignore[import-untyped]  # pygal ships no type information
from markupsafe import Markup
from pygal.style import Style  # type: ignore[import-untyped]

# pygal appends a legacy import hook for its map plugins to sys.meta_path (it has no find_spec,
# so every import no other finder answers warns). The console draws no maps: take it out.
sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__module__ != pygal.__name__]

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)
_DROPPED = frozenset({f"{{{SVG}}}style", f"{{{SVG}}}script", "style", "script"})
SMALLEST, LARGEST = Decimal("1E-6"), Decimal("1E12")
"""Figures whose largest lies outside this range are scaled (pygal's axes overflow beyond it)."""
WIDTH = 640
INTERVAL_WIDTH = 480
"""An interval chart's width: narrower, so its text reads at half the page's width."""
PADDING = 0.08
"""The share of an interval chart's span left free on either side."""
UPRIGHT_LABELS = 6
"""Time windows a column chart labels; with more it labels about this many, evenly spaced."""
ROW_HEIGHT = 34
"""Height each bar or interval row adds to a chart (px of its viewBox)."""

Figure = Decimal | float | int | None
"""A value to draw; None (unknown) draws nothing."""


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def text(value: str) -> str:
    """``value`` without the characters XML cannot hold (control characters, lone surrogates)."""
    return _NOT_XML.sub("\ufffd", value)


def _finite(value: Figure) -> Decimal | None:
    """``value`` as a finite Decimal, or None when unknown or not a number."""
    if value is None:
        return None
    number = value if isinstance(value, Decimal) else Decimal(value)
    return number if number.is_finite() else None


def scale(values: Iterable[Figure]) -> int:
    """The power of ten a chart's figures are divided by so that pygal can lay them out.

    Zero for every ordinary figure; for a huge (or tiny) largest figure, the power that brings it
    to about a thousand (the chart's title then names the factor).
    """
    known = [abs(number) for value in values if (number := _finite(value))]
    largest = max(known, default=Decimal(0))
    if not largest or SMALLEST <= largest <= LARGEST:
        return 0
    return largest.adjusted() - 3


def plotted(value: Figure, power: int = 0) -> float | None:
    """``value`` divided by ``10**power`` as a float to place on a chart; None when unknown."""
    number = _finite(value)
    return None if number is None else float(number.scaleb(-power))


def _titled(title: str, power: int) -> str:
    return title if power == 0 else f"{title} (in units of 1E{power:+d})"


FONT = 14
"""The size console.css gives chart text; pygal sizes its margins for it."""
_SIZES = Style(
    font_family="sans-serif",
    label_font_size=FONT,
    major_label_font_size=FONT,
    legend_font_size=FONT,
    title_font_size=FONT,
    tooltip_font_size=FONT,
    value_font_size=FONT,
    no_data_font_size=22,
)


def _config(rows: int, floor: int, options: Mapping[str, object]) -> dict[str, object]:
    """Settings for a console chart: no script, no style of its own, sized to its rows."""
    return {
        "js": [],
        "style": _SIZES,
        "css": [],
        "disable_xml_declaration": True,
        "width": WIDTH,
        "height": max(floor, 80 + ROW_HEIGHT * rows),
        "margin": 12,
        "show_legend": False,
        "legend_at_bottom": True,
        "truncate_label": 28,
        "truncate_legend": 30,
        "no_data_text": "No figures",
        "print_values": False,
        "tooltip_border_radius": 0,
        "pretty_print": False,
        **options,
    }


def clean(svg: str, title: str, kind: str) -> Markup:
    """The chart ``svg`` without style, script, event handlers or comments, labelled ``title``."""
    root = ET.fromstring(svg)  # noqa: S314 - pygal's own output
    for parent in root.iter():
        for child in list(parent):
            if child.tag in _DROPPED:
                parent.remove(child)
        for name in list(parent.attrib):
            local = name.rsplit("}", 1)[-1].lower()
            if local == "style" or local.startswith("on") or local == "id":
                del parent.attrib[name]
    for defs in root.findall(f"{{{SVG}}}defs"):
        if len(defs) == 0:
            root.remove(defs)
    heading = root.find(f"{{{SVG}}}title")
    if heading is None:
        heading = ET.Element(f"{{{SVG}}}title")
        root.insert(0, heading)
    heading.text = text(title)
    root.set("class", f"chart chart-{kind}")
    root.set("role", "img")
    root.set("aria-label", text(title))
    root.set("focusable", "false")
    return Markup(ET.tostring(root, encoding="unicode"))  # noqa: S704 - escaped by ElementTree


def _render(chart: pygal.graph.graph.Graph, title: str, kind: str) -> Markup:
    return clean(chart.render(is_unicode=True), title, kind)


def _make(
    kind: type, title: str, rows: int, floor: int = 200, **options: object
) -> pygal.graph.graph.Graph:
    """A pygal chart of ``kind`` that shows ``title`` above the plot, ``rows`` high."""
    return kind(title=text(title), **_config(rows, floor, options))


def bars(title: str, labels: Sequence[str], series: Mapping[str, Sequence[Figure]]) -> Markup:
    """Horizontal bars, one row per label, the series stacked (measured and estimated cost)."""
    power = scale(value for values in series.values() for value in values)
    named = {
        text(name): [plotted(value, power) for value in values] for name, values in series.items()
    }
    title = _titled(title, power)
    chart = _make(
        pygal.HorizontalStackedBar,
        title,
        len(labels),
        show_legend=len(named) > 1,
        x_labels=[text(label) for label in labels],
        allow_interruptions=True,
    )
    for name, values in named.items():
        chart.add(name, values)
    return _render(chart, title, "bars")


def columns(title: str, labels: Sequence[str], series: Mapping[str, Sequence[Figure]]) -> Markup:
    """Columns over time windows (``labels``), one stacked series a version."""
    power = scale(value for values in series.values() for value in values)
    named = {
        text(name): [plotted(value, power) for value in values] for name, values in series.items()
    }
    title = _titled(title, power)
    chart = _make(
        pygal.StackedBar,
        title,
        0,
        floor=300,
        show_x_guides=False,
        show_legend=len(named) > 1,
        max_scale=6,
        x_labels=[text(label) for label in labels],
        x_labels_major_every=max(1, -(-len(labels) // UPRIGHT_LABELS)),
        show_minor_x_labels=len(labels) <= UPRIGHT_LABELS,
    )
    for name, values in named.items():
        chart.add(name, values)
    return _render(chart, title, "columns")


def _padded(seen: Sequence[float]) -> tuple[float, float] | None:
    """An x range around ``seen`` with a margin, so no limit or bound sits on the axis."""
    if not seen:
        return None
    low, high = min(seen), max(seen)
    margin = (high - low) * PADDING or abs(high) * PADDING or 1.0
    return (low - margin, high + margin)


@attrs.frozen
class Interval:
    """One row of an interval chart: a point estimate, its two-sided interval and its limit."""

    label: str
    estimate: Figure
    low: Figure
    high: Figure
    limit: Figure = None


def intervals(title: str, rows: Sequence[Interval]) -> Markup:
    """A forest plot: each row's interval as a line, its estimate as a dot, its limit a tick.

    The limits are ``serie-0`` (a dashed tick across each row), the estimates the last series.
    A row without an interval draws nothing on its line (its table row says why).
    """
    count = len(rows)
    power = scale([v for row in rows for v in (row.estimate, row.low, row.high, row.limit)])
    title = _titled(title, power)
    ticks: list[tuple[float, float] | None] = []
    estimates, lines, seen = [], [], []
    for index, row in enumerate(rows):
        height = count - index
        limit = plotted(row.limit, power)
        if limit is not None:
            ticks += [(limit, height - 0.4), (limit, height + 0.4), None]
        low, high = plotted(row.low, power), plotted(row.high, power)
        estimate = plotted(row.estimate, power)
        drawn = [] if low is None or high is None else [(low, height), (high, height)]
        lines.append((text(row.label), drawn))
        if estimate is not None:
            estimates.append((estimate, height))
        seen += [x for x in (limit, low, high, estimate) if x is not None]
    chart = _make(
        pygal.XY,
        title,
        count,
        floor=130,
        width=INTERVAL_WIDTH,
        stroke=True,
        show_dots=False,
        dots_size=5,
        allow_interruptions=True,
        range=(0, count + 1),
        xrange=_padded(seen),
        y_labels=[
            {"label": text(row.label), "value": count - index} for index, row in enumerate(rows)
        ],
        show_x_guides=False,
    )
    chart.add("limit", ticks)
    for name, points in lines:
        chart.add(name, points)
    chart.add("estimate", estimates, stroke=False, show_dots=True)
    return _render(chart, title, "intervals")


__all__ = [
    "Figure",
    "Interval",
    "bars",
    "clean",
    "columns",
    "intervals",
    "plotted",
    "scale",
    "text",
]
