"""``make spec-map``: render docs/spec-map.md, the index from spec rules to code and tests.

Collects the test suite with pytest (nothing runs), reads every ``spec`` marker, and renders each
rule of ``tests/support/spec_rules.py`` with the modules where it lives and the tests that name
it; a rule that no test names is shown as untested. The modules come from the ``ecp_*`` names
the marked tests (and their helpers in the same module or under ``tests/``) refer to, unless
``HOMES`` in the catalogue names them by hand.

    python scripts/spec_map.py [--output docs/spec-map.md]
"""

import argparse
import collections
import importlib.util
import inspect
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence

import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(ROOT))

from tests.support.spec_rules import HOMES, RULES, SECTIONS  # noqa: E402 - after the root is importable

REGENERATE = "make spec-map"
PACKAGES = ("ecp_core", "ecp_postgres", "ecp_http", "ecp_idp", "ecp_billing")
RULE_ID = re.compile(r"(?P<section>§\d+(?:\.\d+)?|C\d+) [a-z0-9]+(?:-[a-z0-9]+)*")
MAX_DERIVED = 3

# Modules that tests touch for their vocabulary (values, wiring) rather than for a rule; a module
# named ``model`` holds an area's values, and the memory store stands in for storage.
PLUMBING = frozenset(
    {
        "ecp_core.constraints",
        "ecp_core.demo",
        "ecp_core.errors",
        "ecp_core.graphs.builder",
        "ecp_core.graphs.definition",
        "ecp_core.identity",
        "ecp_core.service",
        "ecp_core.signing",
        "ecp_core.system",
        "ecp_core.types",
        "ecp_core.wire",
        "ecp_http.startup.app",
        "ecp_http.startup.bootstrap",
        "ecp_http.config.settings",
        "ecp_postgres.database",
        "ecp_postgres.migrations",
    }
)


def is_plumbing(module: str) -> bool:
    """Whether ``module`` is vocabulary or wiring, never the home of a rule."""
    return module in PLUMBING or module.endswith(".model") or module.startswith("ecp_core.memory")


def _tested_callables(func: object) -> Iterator[types.FunctionType]:
    """Yield the plain function behind a test, unwrapping decorators and Hypothesis."""
    inner = getattr(getattr(func, "hypothesis", None), "inner_test", func)
    inner = inspect.unwrap(inner) if callable(inner) else inner
    inner = getattr(inner, "__func__", inner)
    if isinstance(inner, types.FunctionType):
        yield inner


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _module_of(value: object) -> str | None:
    if isinstance(value, types.ModuleType):
        return value.__name__
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) else None


def _is_ours(module: str) -> bool:
    return module.split(".", 1)[0] in PACKAGES and not module.startswith("ecp_core.testing")


def _is_helper(module: str) -> bool:
    return module.startswith(("tests", "ecp_core.testing"))


def referenced_modules(func: object, depth: int = 2) -> set[str]:
    """The ``ecp_*`` modules whose names a test (or a test helper it calls) refers to."""
    found: set[str] = set()
    seen: set[int] = set()
    pending = [(inner, depth) for inner in _tested_callables(func)]
    while pending:
        function, left = pending.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        for name in _code_names(function.__code__):
            value = function.__globals__.get(name)
            module = _module_of(value) if value is not None else None
            if module is None:
                continue
            if _is_ours(module):
                found.add(module)
            elif left and isinstance(value, types.FunctionType) and _is_helper(module):
                pending.append((value, left - 1))
    return found


Collected = tuple[dict[str, list[str]], dict[str, list[str]]]
"""Per test node id: the rules its markers name, and the ``ecp_*`` modules it refers to."""

OUTPUT_VARIABLE = "ECP_SPEC_MAP_OUTPUT"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Plugin hook (``-p spec_map``): write the marked tests of the collection as JSON."""
    tests: dict[str, set[str]] = collections.defaultdict(set)
    modules: dict[str, set[str]] = collections.defaultdict(set)
    for item in session.items:
        rules = [str(arg) for mark in item.iter_markers("spec") for arg in mark.args]
        if rules:
            nodeid = item.nodeid.partition("[")[0]
            tests[nodeid].update(rules)
            modules[nodeid] |= referenced_modules(getattr(item, "obj", None))
    pathlib.Path(os.environ[OUTPUT_VARIABLE]).write_text(
        json.dumps(
            [{k: sorted(v) for k, v in tests.items()}, {k: sorted(v) for k, v in modules.items()}]
        ),
        encoding="utf-8",
    )


def collect(paths: Sequence[str] = ("tests",)) -> Collected:
    """Collect the tests under ``paths`` (relative to the workspace root) in a pytest subprocess."""
    with tempfile.TemporaryDirectory(prefix="ecp-spec-map-") as scratch:
        output = pathlib.Path(scratch) / "collected.json"
        env = {
            **os.environ,
            OUTPUT_VARIABLE: str(output),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(SCRIPTS), os.environ.get("PYTHONPATH")])
            ),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-qq",
            "-p",
            "no:cacheprovider",
            "-p",
            "spec_map",
            f"--rootdir={ROOT}",
            "-c",
            str(ROOT / "pyproject.toml"),
            *(str(ROOT / path) for path in paths),
        ]
        done = subprocess.run(  # noqa: S603 - our own interpreter, arguments of our own
            command, cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0 or not output.exists():
            sys.stderr.write(done.stdout + done.stderr)
            msg = f"spec-map: collecting the tests failed (pytest exit status {done.returncode})"
            raise SystemExit(msg)
        tests, modules = json.loads(output.read_text(encoding="utf-8"))
    return tests, modules


def check_rule_ids(tests: Mapping[str, Iterable[str]]) -> None:
    """Raise when a marker names a rule the catalogue does not know."""
    unknown = sorted(
        f"{nodeid}: {rule!r}"
        for nodeid, rules in tests.items()
        for rule in rules
        if rule not in RULES
    )
    if unknown:
        msg = "unknown spec rules (see tests/support/spec_rules.py):\n" + "\n".join(unknown)
        raise ValueError(msg)


def section_of(rule: str) -> str:
    """The section id a rule id starts with."""
    match = RULE_ID.fullmatch(rule)
    if match is None:
        msg = f"not a rule id: {rule!r}"
        raise ValueError(msg)
    return match["section"]


def missing_homes() -> list[str]:
    """The modules ``HOMES`` names that cannot be imported (renamed or removed)."""
    named = {module for modules in HOMES.values() for module in modules}
    return sorted(module for module in named if importlib.util.find_spec(module) is None)


def _homes(rule: str, nodeids: Sequence[str], modules: Mapping[str, Iterable[str]]) -> list[str]:
    if rule in HOMES:
        return list(HOMES[rule])
    counts = collections.Counter(
        module
        for nodeid in nodeids
        for module in modules.get(nodeid, ())
        if not is_plumbing(module)
    )
    return sorted(counts, key=lambda module: (-counts[module], module))[:MAX_DERIVED]


HEADER = """\
# Spec map: where each rule lives and which tests check it

Generated by `{regenerate}` (`python scripts/spec_map.py --output docs/spec-map.md`) from the
`spec` markers on the tests and the rule catalogue in `tests/support/spec_rules.py`. Do not edit
by hand: `tests/docs/test_spec_map.py` fails when this file is not the rendering.

**Rule ids.** A test names the rule it checks with `@pytest.mark.spec("§3.2 crypto-erase-v2")`
(several ids may be given). An id is a section and a slug. `§<n>` and `§<n>.<m>` number the sections
of the service specification ECP implements, in its order: `§1` to `§9` its sections, `§<n>.1`,
`§<n>.2`, ... the parts of each (`§9.1` is "Additional behavior that belongs to the contract").
`C<n>` numbers, in order, the groups of decisions that settle what the specification leaves open
(`C1` Wire ... `C13` Model calls and backtests). Each section's title is in `SECTIONS` of
`tests/support/spec_rules.py` and heads its table below. The slug is unique on its own. A new rule
gets a new slug; a slug is never reused for another rule.

**Lives in** names the modules where the rule is implemented: the `ecp_*` modules the marked tests
refer to (at most {max_derived}, most used first), or the hand-kept `HOMES` of the catalogue.
**Tests** are pytest node ids (parametrised tests once). A rule no test names is **untested**.

{summary}
"""


def _cell(items: Iterable[str]) -> str:
    return "<br>".join(f"`{item}`" for item in items)


def render(tests: Mapping[str, Iterable[str]], modules: Mapping[str, Iterable[str]]) -> str:
    """The Markdown of the map for the collected ``tests`` (nodeid → rules) and their modules."""
    check_rule_ids(tests)
    by_rule: dict[str, list[str]] = collections.defaultdict(list)
    for nodeid in sorted(tests):
        for rule in sorted(set(tests[nodeid])):
            by_rule[rule].append(nodeid)
    untested = [rule for rule in RULES if rule not in by_rule]
    summary = (
        f"{len(RULES)} rules; {len(RULES) - len(untested)} checked by "
        f"{len(tests)} marked tests; {len(untested)} untested."
    )
    lines = [HEADER.format(regenerate=REGENERATE, max_derived=MAX_DERIVED, summary=summary)]
    for section, title in SECTIONS.items():
        rules = [rule for rule in RULES if section_of(rule) == section]
        if not rules:
            continue
        lines += [
            f"## {section} {title}",
            "",
            "| Rule | Statement | Lives in | Tests |",
            "|---|---|---|---|",
        ]
        for rule in rules:
            nodeids = by_rule.get(rule, [])
            homes = _cell(_homes(rule, nodeids, modules)) if nodeids or rule in HOMES else ""
            checked = _cell(nodeids) if nodeids else "**untested**"
            lines.append(f"| `{rule}` | {RULES[rule]} | {homes} | {checked} |")
        lines.append("")
    lines += ["## Untested rules", ""]
    lines += [f"- `{rule}`: {RULES[rule]}" for rule in untested] or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the map, or write it to ``--output``; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    text = render(*collect())
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
