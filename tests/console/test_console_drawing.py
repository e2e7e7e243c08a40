"""The graph drawing: every node and edge once, boxes apart, everything inside the viewBox.

:func:`~ecp_http.server.console.drawing.draw_graph` is a pure function of a graph (and where a
run stands at each node); the ``drawing`` macro turns it into one inline SVG. Hypothesis draws
graphs with branches, loops, self-loops, parallel edges, long ids and unreachable nodes.
"""

import itertools
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.graphs.definition import Condition, EdgeDefinition, GraphDefinition, NodeDefinition
from ecp_core.types import NodeKind
from ecp_http.server.console.drawing import PLAIN, Drawing, draw_graph

pytestmark = [pytest.mark.unit, pytest.mark.spec("C15 console-drawing")]

SVG = "{http://www.w3.org/2000/svg}"
_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("ecp_http.server.pages", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
STATES = ("here", "done", "failed", "waiting", "ahead", "denied", None)


def svg_of(drawing: Drawing) -> ET.Element:
    """The macro's output parsed as XML (so it is well formed), the region around the SVG."""
    html = _templates.get_template("console_drawing.html").module.drawing(drawing, "The graph")  # type: ignore[attr-defined]
    return ET.fromstring(str(html))  # noqa: S314 (our own template's output)


expressions = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=40)
node_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,60}", fullmatch=True)


@st.composite
def graphs(draw: st.DrawFn) -> tuple[GraphDefinition, list[dict[str, Any]]]:
    """A graph of 1 to 14 nodes with any edges between them, and a run's states for its nodes."""
    ids = draw(st.lists(node_ids, min_size=1, max_size=14, unique=True))
    kinds = list(NodeKind)
    nodes = tuple(NodeDefinition(id=i, kind=draw(st.sampled_from(kinds))) for i in ids)
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=24))
    edges = tuple(
        EdgeDefinition(
            source=s,
            target=t,
            condition=Condition(expression=draw(expressions)) if draw(st.booleans()) else None,
        )
        for s, t in pairs
    )
    graph = GraphDefinition(graph_id="drawn", entry=ids[0], nodes=nodes, edges=edges)
    rows = [{"node_id": i, "state": draw(st.sampled_from(STATES))} for i in ids]
    return graph, rows


def _inside(drawing: Drawing, x: float, y: float) -> bool:
    eps = 0.01
    return (
        drawing.min_x - eps <= x <= drawing.min_x + drawing.width + eps
        and drawing.min_y - eps <= y <= drawing.min_y + drawing.height + eps
    )


@given(graphs())
def test_every_node_and_edge_once_apart_and_inside(case) -> None:
    graph, rows = case
    drawing = draw_graph(graph, rows)
    assert [n.node_id for n in drawing.nodes] == [n.id for n in graph.nodes]
    assert Counter((e.source, e.target) for e in drawing.edges) == Counter(
        (e.source, e.target) for e in graph.edges
    )
    boxes = drawing.nodes
    for i, a in enumerate(boxes):
        assert _inside(drawing, a.left, a.top)
        assert _inside(drawing, a.left + a.width, a.top + a.height)
        for b in boxes[i + 1 :]:
            apart_x = a.left + a.width <= b.left or b.left + b.width <= a.left
            apart_y = a.top + a.height <= b.top or b.top + b.height <= a.top
            assert apart_x or apart_y, (a, b)
    for edge in drawing.edges:
        assert all(_inside(drawing, x, y) for x, y in edge.points)  # the curve is in their hull
        if edge.label_at is not None:
            half = edge.label_width / 2
            assert _inside(drawing, edge.label_at[0] - half, edge.label_at[1] - 8)
            assert _inside(drawing, edge.label_at[0] + half, edge.label_at[1] + 8)
    reached, queue = {graph.entry}, [graph.entry]
    while queue:
        here = queue.pop()
        for edge in graph.edges:
            if edge.source == here and edge.target not in reached:
                reached.add(edge.target)
                queue.append(edge.target)
    y = {node.node_id: node.y for node in boxes}
    assert all(y[graph.entry] <= y[node] for node in reached)  # the entry on top
    region = svg_of(drawing)
    svg = region.find(f"{SVG}svg")
    assert svg is not None
    assert svg.get("role") == "img"
    drawn_nodes = Counter(g.get("data-node") for g in svg.iter(f"{SVG}g") if g.get("data-node"))
    assert drawn_nodes == Counter(n.id for n in graph.nodes)
    drawn_edges = [g for g in svg.iter(f"{SVG}g") if g.get("data-source") is not None]
    assert Counter((g.get("data-source"), g.get("data-target")) for g in drawn_edges) == Counter(
        (e.source, e.target) for e in graph.edges
    )


def test_states_classes_taken_edges_and_long_ids() -> None:
    long_id = "check-the-customer-credit-limit-before-paying"
    graph = GraphDefinition(
        graph_id="pay",
        entry="start",
        nodes=(
            NodeDefinition(id="start", kind=NodeKind.MAPPING),
            NodeDefinition(id=long_id, kind=NodeKind.APPROVAL),
            NodeDefinition(id="retry", kind=NodeKind.MAPPING),
            NodeDefinition(id="end", kind=NodeKind.END),
        ),
        edges=(
            EdgeDefinition(source="start", target=long_id),
            EdgeDefinition(
                source=long_id, target="retry", condition=Condition(expression="state.again")
            ),
            EdgeDefinition(source="retry", target=long_id),
            EdgeDefinition(source=long_id, target="end"),
        ),
    )
    rows = [
        {"node_id": "start", "state": "done"},
        {"node_id": long_id, "state": "here"},
        {"node_id": "retry", "state": "ahead"},
        {"node_id": "end", "state": "ahead"},
    ]
    drawing = draw_graph(graph, rows)
    node = {n.node_id: n for n in drawing.nodes}
    assert node[long_id].label.endswith("…")
    assert len(node[long_id].label) == 20
    assert node[long_id].title.startswith(long_id)
    assert "waits here" in node[long_id].title
    taken = {(e.source, e.target) for e in drawing.edges if e.taken}
    assert taken == {("start", long_id)}
    assert [e.back for e in drawing.edges] == [False, False, True, False]
    conditional = [e for e in drawing.edges if e.condition]
    assert [e.label for e in conditional] == ["state.again"]
    svg = svg_of(drawing).find(f"{SVG}svg")
    assert svg is not None
    classes = {g.get("data-node"): g.get("class") for g in svg.iter(f"{SVG}g")}
    assert classes["start"] == "node state-done"
    assert classes[long_id] == "node state-here"
    titles = [t.text for t in svg.iter(f"{SVG}title")]
    assert any(long_id in (t or "") for t in titles)


def test_plain_graph_without_a_run() -> None:
    graph = GraphDefinition(
        graph_id="one", entry="a", nodes=(NodeDefinition(id="a", kind=NodeKind.END),)
    )
    drawing = draw_graph(graph)
    assert [n.state for n in drawing.nodes] == [PLAIN]
    assert drawing.edges == ()
    assert drawing.width > 0
    assert drawing.height > 0


def test_the_entry_is_on_top_and_only_the_edges_closing_a_loop_lead_back_up() -> None:
    def node(node_id: str) -> NodeDefinition:
        return NodeDefinition(id=node_id, kind=NodeKind.MAPPING)

    chain = ["start", "fetch", "validate", "enrich", "score", "decide", "retry"]
    edges = [EdgeDefinition(source=a, target=b) for a, b in itertools.pairwise(chain)]
    edges += [
        EdgeDefinition(source="retry", target="fetch"),  # the loop, over five layers
        EdgeDefinition(source="score", target="score"),  # a self-loop
        EdgeDefinition(source="start", target="decide"),  # a skip, down
        EdgeDefinition(source="validate", target="decide"),
    ]
    graph = GraphDefinition(
        graph_id="loop", entry="start", nodes=tuple(map(node, chain)), edges=tuple(edges)
    )
    drawing = draw_graph(graph)
    y = {n.node_id: n.y for n in drawing.nodes}
    assert [y[n] for n in chain] == sorted(y[n] for n in chain)  # one layer after another
    assert len(set(y.values())) == len(chain)
    back = [(e.source, e.target) for e in drawing.edges if e.back]
    assert back == [("retry", "fetch"), ("score", "score")]
