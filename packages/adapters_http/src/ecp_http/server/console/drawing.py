"""A workflow graph drawn as SVG: igraph's layered layout, turned into shapes a template draws.

:func:`draw_graph` lays a :class:`~ecp_core.graphs.definition.GraphDefinition` out top to bottom
with ``Graph.layout_sugiyama`` (layers, crossing reduction, cycles broken by the layout itself,
ADR 0081) and returns a :class:`Drawing`: node boxes, edge paths and the viewBox that holds
them, all in SVG user units. The macro ``drawing`` of ``console_drawing.html`` renders it; no
style is inline, the classes (``state-done`` ...) are coloured by ``console.css``.

A pure function of the graph and the rows of :func:`~ecp_http.server.console.views.graph_rows`
(where a run stands at each node); without rows the graph is drawn plain (a deployment's).
An edge is drawn as taken when the run passed its source and reached its target.
"""

import itertools
from collections.abc import Sequence
from typing import Any

import attrs
import igraph  # type: ignore[import-untyped]

from ecp_core.graphs.definition import EdgeDefinition, GraphDefinition

NODE_WIDTH = 176.0
NODE_HEIGHT = 54.0
COLUMN = NODE_WIDTH + 44.0
"""Horizontal distance between neighbouring slots of a layer."""
ROW = NODE_HEIGHT + 66.0
"""Vertical distance between layers (room for an edge's condition between them)."""
MARGIN = 16.0
LOOP = 34.0
"""How far a back edge between neighbouring layers, or a self-loop, bows out to the right."""
PARALLEL = 10.0
"""Horizontal offset between edges that join the same two nodes."""
ID_CHARS = 20
"""The longest node id a box shows whole; a longer one ends with an ellipsis."""
LABEL_CHARS = 18
"""The longest condition an edge shows whole."""
LABEL_CHAR_WIDTH = 6.4
LABEL_HEIGHT = 16.0
MAX_DRAWN_NODES = 200
MAX_DRAWN_EDGES = 400
"""The largest graph the console draws; a larger one is shown as its node list alone (its
layout would take seconds and its drawing be too large to read)."""
PLAIN = "plain"
"""The state of every node of a graph drawn without a run."""
DENIED = "denied"
"""The state of a node of a deployment's graph that the deployment's policy stops."""
STATE_WORDS = {
    "here": "waits here",
    "done": "passed",
    "failed": "failed",
    "waiting": "waited",
    "ahead": "not reached",
    "denied": "stopped by the policy",
    PLAIN: "",
}
"""What each state says in a node's title (as the node list says it)."""
_REACHED = frozenset({"here", "done", "failed", "waiting"})

Point = tuple[float, float]


@attrs.frozen(kw_only=True)
class DrawnNode:
    """A node's box: its centre ``(x, y)``, its size, the text it shows and its full title."""

    node_id: str
    label: str
    """The id as the box shows it (shortened with an ellipsis when long)."""
    kind: str
    state: str
    title: str
    """The id complete, the kind and the state: the box's tooltip and accessible name."""
    x: float
    y: float
    width: float = NODE_WIDTH
    height: float = NODE_HEIGHT

    @property
    def left(self) -> float:
        """The box's left edge."""
        return self.x - self.width / 2

    @property
    def top(self) -> float:
        """The box's top edge."""
        return self.y - self.height / 2


@attrs.frozen(kw_only=True)
class DrawnEdge:
    """An edge's path: the points it passes (start, control points, end) and what it says."""

    source: str
    target: str
    points: tuple[Point, ...]
    """Cubic Bézier segments: the start, then three points per segment."""
    taken: bool
    """Whether the run went along it (its source passed and its target was reached)."""
    back: bool
    """Whether it leads back up (a loop) or to its own node."""
    condition: str | None
    """The condition's CEL expression, complete (None: always taken)."""
    label: str | None
    """The condition as the drawing shows it (shortened)."""
    label_at: Point | None
    """The centre of the label."""

    @property
    def d(self) -> str:
        """The SVG path data."""
        start, rest = self.points[0], self.points[1:]
        curves = " ".join(
            "C " + " ".join(f"{x:.1f} {y:.1f}" for x, y in rest[i : i + 3])
            for i in range(0, len(rest), 3)
        )
        return f"M {start[0]:.1f} {start[1]:.1f} {curves}"

    @property
    def label_width(self) -> float:
        """The width of the label's backing box."""
        return 0.0 if self.label is None else len(self.label) * LABEL_CHAR_WIDTH + 8


@attrs.frozen(kw_only=True)
class Drawing:
    """A graph laid out: what the ``drawing`` macro turns into one inline ``<svg>``."""

    key: str
    """A prefix for the SVG's element ids (unique on its page)."""
    title: str
    nodes: tuple[DrawnNode, ...]
    edges: tuple[DrawnEdge, ...]
    min_x: float
    min_y: float
    width: float
    height: float

    @property
    def view_box(self) -> str:
        """The SVG ``viewBox``."""
        return f"{self.min_x:.1f} {self.min_y:.1f} {self.width:.1f} {self.height:.1f}"


def shorten(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else cut with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _segment(a: Point, b: Point) -> list[Point]:
    """A cubic segment from ``a`` to ``b`` leaving and arriving vertically."""
    middle = (a[1] + b[1]) / 2
    return [(a[0], middle), (b[0], middle), b]


def _bezier(p0: Point, p1: Point, p2: Point, p3: Point, t: float) -> Point:
    u = 1 - t
    x = u**3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t**3 * p3[0]
    y = u**3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t**3 * p3[1]
    return (x, y)


def _place(layout: Any) -> tuple[list[Point], list[list[Point]]]:  # noqa: ANN401
    """Layout units to user units: node centres, and the edges' bend points."""
    coords = [(float(x), float(y)) for x, y in layout.coords]
    bends = [[(float(x), float(y)) for x, y in routing] for routing in layout.edge_routing]
    every = coords + [point for route in bends for point in route]
    left = min(x for x, _ in every)
    by_layer: dict[float, list[int]] = {}
    for index, (_, y) in enumerate(coords):
        by_layer.setdefault(y, []).append(index)
    for members in by_layer.values():  # at least one slot apart in a layer, whatever the layout
        members.sort(key=lambda i: coords[i][0])
        for before, after in itertools.pairwise(members):
            if coords[after][0] < coords[before][0] + 1:
                coords[after] = (coords[before][0] + 1, coords[after][1])

    def user(point: Point) -> Point:
        x, y = point
        return (
            MARGIN + NODE_WIDTH / 2 + (x - left) * COLUMN,
            MARGIN + NODE_HEIGHT / 2 + y * ROW,
        )

    return [user(c) for c in coords], [[user(p) for p in route] for route in bends]


def _route(
    source: Point, target: Point, bends: list[Point], shift: float, *, self_loop: bool
) -> tuple[list[Point], bool]:
    """The Bézier points of an edge and whether it leads back up (or to its own node)."""
    sx, sy = source[0] + shift, source[1]
    tx, ty = target[0] + shift, target[1]
    half_w, half_h = NODE_WIDTH / 2, NODE_HEIGHT / 2
    if self_loop:
        right = sx + half_w - shift
        out = right + LOOP + shift
        return [(right, sy - 10), (out, sy - 30), (out, sy + 30), (right, sy + 10)], True
    if ty > sy:  # down, through the layout's bend points
        stops = [(sx, sy + half_h), *bends, (tx, ty - half_h)]
        points = [stops[0]]
        for a, b in itertools.pairwise(stops):
            points += _segment(a, b)
        return points, False
    if bends:  # a long loop: out of a side, up beside the layers, into the target's side
        first, last = bends[0], bends[-1]
        out_side = half_w if first[0] >= sx else -half_w
        in_side = half_w if last[0] >= tx else -half_w
        start, end = (sx + out_side - shift, sy), (tx + in_side - shift, ty)
        points = [start, (first[0], sy), (first[0], sy), first]
        for a, b in itertools.pairwise(bends):
            points += _segment(a, b)
        return [*points, (last[0], ty), (last[0], ty), end], True
    # A loop between neighbouring layers: out of the right side, bowing right, back in.
    start, end = (sx + half_w - shift, sy), (tx + half_w - shift, ty)
    out = max(start[0], end[0]) + LOOP + shift
    return [start, (out, sy), (out, ty), end], True


def _label_at(points: list[Point], *, back: bool) -> Point:
    """Where an edge's condition sits: past the middle of its first segment.

    Past the middle, so that the labels of two edges leaving one node stand apart.
    """
    return _bezier(points[0], points[1], points[2], points[3], 0.5 if back else 0.62)


def _walk(out: list[list[int]], entry: int) -> tuple[list[int], set[tuple[int, int]]]:
    """The nodes in the order a depth-first walk finishes them, and the loops.

    The walk starts at the entry, then at each node not reached yet; a loop is an edge that
    leads back to a node still on the walk's path.
    """
    count = len(out)
    on_path, done = [False] * count, [False] * count
    finished: list[int] = []
    back: set[tuple[int, int]] = set()
    for root in [entry, *range(count)]:
        if done[root]:
            continue
        on_path[root] = True
        stack = [(root, iter(out[root]))]
        while stack:
            node, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                stack.pop()
                on_path[node], done[node] = False, True
                finished.append(node)
            elif on_path[target]:
                back.add((node, target))
            elif not done[target]:
                on_path[target] = True
                stack.append((target, iter(out[target])))
    return finished, back


def _layers(count: int, entry: int, pairs: list[tuple[int, int]]) -> list[int]:
    """Each node's layer: the entry's first, and every edge down but those closing a loop.

    Each node sits one layer below the lowest node leading to it (longest path).
    """
    out: list[list[int]] = [[] for _ in range(count)]
    for source, target in pairs:
        out[source].append(target)
    finished, back = _walk(out, entry)
    layer = [0] * count
    for node in reversed(finished):  # a topological order of the edges that lead down
        for target in out[node]:
            if (node, target) not in back:
                layer[target] = max(layer[target], layer[node] + 1)
    return layer


def _states(graph: GraphDefinition, rows: Sequence[dict[str, Any]] | None) -> dict[str, str]:
    known = {str(row["node_id"]): row.get("state") or PLAIN for row in rows or ()}
    return {node.id: known.get(node.id, PLAIN) for node in graph.nodes}


def drawable(graph: GraphDefinition) -> bool:
    """Whether ``graph`` is small enough to draw (:data:`MAX_DRAWN_NODES`, :data:`MAX_DRAWN_EDGES`)."""
    return len(graph.nodes) <= MAX_DRAWN_NODES and len(graph.edges) <= MAX_DRAWN_EDGES


def draw_graph(
    graph: GraphDefinition,
    rows: Sequence[dict[str, Any]] | None = None,
    *,
    key: str = "g",
) -> Drawing:
    """``graph`` laid out top to bottom, each node in the state ``rows`` give it (else plain)."""
    index = {node.id: i for i, node in enumerate(graph.nodes)}
    edges = [e for e in graph.edges if e.source in index and e.target in index]
    pairs = [(index[e.source], index[e.target]) for e in edges]
    layers = _layers(len(graph.nodes), index.get(graph.entry, 0), pairs)
    # igraph's Sugiyama layout can crash the process (a segmentation fault, seen under the
    # drawing's property test) on edges inside one layer; those and self-loops are routed by
    # _route without bend points, so only the edges between layers go to the layout.
    laid = [number for number, (s, t) in enumerate(pairs) if layers[s] != layers[t]]
    layered = igraph.Graph(n=len(graph.nodes), edges=[pairs[n] for n in laid], directed=True)
    centres, routed = _place(layered.layout_sugiyama(layers=layers, maxiter=50))
    bends: list[list[Point]] = [[] for _ in pairs]
    for number, route in zip(laid, routed, strict=True):
        bends[number] = route
    states = _states(graph, rows)
    nodes = tuple(
        DrawnNode(
            node_id=node.id,
            label=shorten(node.id, ID_CHARS),
            kind=node.kind.value.replace("_", " "),
            state=states[node.id],
            title=" · ".join(
                part
                for part in (
                    node.id,
                    node.kind.value.replace("_", " "),
                    STATE_WORDS[states[node.id]],
                )
                if part
            ),
            x=centres[i][0],
            y=centres[i][1],
        )
        for i, node in enumerate(graph.nodes)
    )
    drawn = _edges(edges, index, centres, bends, states)
    return _framed(key, f"The graph {graph.graph_id}", nodes, drawn)


def _edges(
    edges: list[EdgeDefinition],
    index: dict[str, int],
    centres: list[Point],
    bends: list[list[Point]],
    states: dict[str, str],
) -> tuple[DrawnEdge, ...]:
    seen: dict[tuple[str, str], int] = {}
    drawn = []
    for number, edge in enumerate(edges):
        pair = (edge.source, edge.target)
        shift = PARALLEL * seen.get(pair, 0)
        seen[pair] = seen.get(pair, 0) + 1
        points, back = _route(
            centres[index[edge.source]],
            centres[index[edge.target]],
            bends[number],
            shift,
            self_loop=edge.source == edge.target,
        )
        expression = edge.condition.expression if edge.condition is not None else None
        drawn.append(
            DrawnEdge(
                source=edge.source,
                target=edge.target,
                points=tuple(points),
                taken=states[edge.source] == "done" and states[edge.target] in _REACHED,
                back=back,
                condition=expression,
                label=None if expression is None else shorten(expression, LABEL_CHARS),
                label_at=None if expression is None else _label_at(points, back=back),
            )
        )
    return tuple(drawn)


def _framed(
    key: str, title: str, nodes: tuple[DrawnNode, ...], edges: tuple[DrawnEdge, ...]
) -> Drawing:
    """The drawing with a viewBox that holds every box, path point and label, with a margin."""
    xs = [x for node in nodes for x in (node.left, node.left + node.width)]
    ys = [y for node in nodes for y in (node.top, node.top + node.height)]
    for edge in edges:
        xs += [x for x, _ in edge.points]
        ys += [y for _, y in edge.points]
        if edge.label_at is not None:
            xs += [edge.label_at[0] - edge.label_width / 2, edge.label_at[0] + edge.label_width / 2]
            ys += [edge.label_at[1] - LABEL_HEIGHT / 2, edge.label_at[1] + LABEL_HEIGHT / 2]
    min_x, min_y = min(xs) - MARGIN, min(ys) - MARGIN
    return Drawing(
        key=key,
        title=title,
        nodes=nodes,
        edges=edges,
        min_x=min_x,
        min_y=min_y,
        width=max(xs) + MARGIN - min_x,
        height=max(ys) + MARGIN - min_y,
    )


__all__ = [
    "DENIED",
    "MAX_DRAWN_EDGES",
    "MAX_DRAWN_NODES",
    "PLAIN",
    "STATE_WORDS",
    "Drawing",
    "DrawnEdge",
    "DrawnNode",
    "draw_graph",
    "drawable",
    "shorten",
]
