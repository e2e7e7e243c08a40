"""The console's charts: any figures render a clean SVG (no style, script or event handler)."""

import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_http.server.console import charts, figures

pytestmark = pytest.mark.unit

CHARTS = "C15 console-charts"
SVG = "{http://www.w3.org/2000/svg}"

money = st.one_of(
    st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=None),
    st.decimals(min_value=Decimal("-1E+30"), max_value=Decimal("1E+30"), places=8),
    st.just(Decimal("1E-8")),
    st.just(Decimal("9" * 60)),
    st.just(Decimal("1E+400")),
)
number = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers())
label = st.text(min_size=0, max_size=60)


def assert_clean(svg: str, title: str) -> None:
    """``svg`` parses as SVG, carries no style, script or on* attribute, and is labelled."""
    root = ET.fromstring(svg)  # noqa: S314 - the module's own output, in a test
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("aria-label", "").startswith(charts.text(title))
    for element in root.iter():
        assert element.tag not in (f"{SVG}style", f"{SVG}script")
        for name in element.attrib:
            local = name.rsplit("}", 1)[-1].lower()
            assert local != "style" and not local.startswith("on"), (element.tag, name)
    assert "<style" not in svg and "<script" not in svg and "style=" not in svg


@pytest.mark.spec(CHARTS)
@settings(max_examples=60, deadline=None)
@given(
    title=label,
    rows=st.lists(st.tuples(label, money, money), max_size=12),
)
def test_bars_of_any_money_render_clean_svg(title, rows):
    labels = [row[0] for row in rows]
    svg = charts.bars(
        title, labels, {"measured": [r[1] for r in rows], "estimated": [r[2] for r in rows]}
    )
    assert_clean(str(svg), title)
    one = charts.bars(title, labels, {"known": [r[1] for r in rows]})
    assert_clean(str(one), title)


@pytest.mark.spec(CHARTS)
@settings(max_examples=40, deadline=None)
@given(
    title=label,
    windows=st.lists(label, max_size=20),
    versions=st.dictionaries(label, st.lists(money, max_size=20), max_size=4),
)
def test_columns_over_time_render_clean_svg(title, windows, versions):
    series = {
        name: (values + [None] * len(windows))[: len(windows)] for name, values in versions.items()
    }
    assert_clean(str(charts.columns(title, windows, series)), title)


@pytest.mark.spec(CHARTS)
@settings(max_examples=60, deadline=None)
@given(
    title=label,
    rows=st.lists(st.tuples(label, number, number, number, number), max_size=10),
)
def test_intervals_crossing_zero_or_missing_render_clean_svg(title, rows):
    shown = [charts.Interval(*row) for row in rows]
    assert_clean(str(charts.intervals(title, shown)), title)


@pytest.mark.spec(CHARTS)
def test_markup_in_labels_is_text_and_huge_figures_are_scaled_not_dropped():
    svg = str(
        charts.bars(
            '<script>alert(1)</script>" onload="x',
            ['<img src=x onerror="alert(1)">'],
            {"known": [Decimal("1E+400")]},
        )
    )
    assert_clean(svg, "<script>")
    assert "1E+397" in svg  # the title names the factor the bars were divided by
    assert "<img" not in svg
    assert charts.scale([Decimal("0.5"), Decimal(3)]) == 0
    assert charts.plotted(None) is None and charts.plotted(float("inf")) is None


@pytest.mark.spec(CHARTS)
def test_no_figures_say_so():
    for svg in (charts.bars("Empty", [], {}), charts.intervals("Empty", [])):
        assert_clean(str(svg), "Empty")
        assert "No figures" in str(svg)


@pytest.mark.spec("C15 console-economics")
@settings(max_examples=200, deadline=None)
@given(amount=st.decimals(allow_nan=False, allow_infinity=False, places=None))
def test_money_is_printed_exactly(amount):
    shown = figures.money(amount)
    assert "E" not in shown and "e" not in shown
    number = Decimal(shown.replace(figures.MINUS, "-").replace("$", "").replace(",", ""))
    assert number == amount  # nothing rounded, nothing lost


def test_money_reads_as_people_write_it():
    assert figures.money(Decimal("1E-8")) == "$0.00000001"
    assert figures.money(Decimal("1234.5")) == "$1,234.50"
    assert figures.money(Decimal(-3)) == f"{figures.MINUS}$3.00"
    assert figures.money(None) == "unknown"
