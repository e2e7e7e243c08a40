"""Generate the Python client's models and error classes (``make clients``, docs/clients.md).

From ``clients/openapi.json`` (the served OpenAPI document) it writes
the package ``packages/client/src/ecp_client/models``: one frozen attrs class for each schema
that the client's resources return (the ``AREAS`` below and every schema they reach), a module
per area. From
``docs/api/errors.md`` (the server's declared problem codes) it writes
``packages/client/src/ecp_client/problems.py``: one ``EcpError`` subclass per code, named by it.
``tests/clients/test_client_package.py`` fails when a committed file differs from this
rendering. ``--check`` exits 1 instead of writing when a file is stale.
"""

import argparse
import json
import keyword
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPENAPI = ROOT / "clients" / "openapi.json"
ERRORS = ROOT / "docs" / "api" / "errors.md"
PACKAGE = ROOT / "packages" / "client" / "src" / "ecp_client"
MODELS = PACKAGE / "models"
PROBLEMS = PACKAGE / "problems.py"
UNASYNC = {  # the async module written by hand -> its sync twin
    PACKAGE / "_async_client.py": PACKAGE / "_sync_client.py",
    PACKAGE / "_async_resources.py": PACKAGE / "_sync_resources.py",
    PACKAGE / "_async_sender.py": PACKAGE / "_sync_sender.py",
}
UNASYNC_WORDS = (  # in this order
    ("AsyncIterator", "Iterator"),
    ("AsyncSender", "Sender"),
    ("AsyncBaseTransport", "BaseTransport"),
    ("AsyncClient", "Client"),
    ("async def ", "def "),
    ("await ", ""),
    ("import asyncio", "import time"),
    ("asyncio.sleep", "time.sleep"),
    ("_async_", "_sync_"),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("aclose", "close"),
)

AREAS = (
    ("graphs", ("GraphRegistration", "GraphVersion", "GraphListResponse")),
    ("deployments", ("Deployment", "DeploymentListResponse")),
    ("runs", ("RunStatusResponse", "AdminRunListResponse")),
    ("audit", ("AuditTimelineResponse", "AuditVerificationResponse", "AuditBundle")),
    ("approvals", ("ApprovalRecord", "ApprovalPageResponse", "ApprovalResolutionResponse")),
    (
        "tasks",
        (
            "TaskClaimResponse",
            "TaskSummary",
            "TaskCompletion",
            "TaskListResponse",
            "TaskLockResponse",
        ),
    ),
    (
        "webhooks",
        (
            "SubscriptionCreated",
            "SubscriptionListResponse",
            "SecretRotated",
            "WebhookEventPayload",
            "Delivery",
        ),
    ),
    ("decisions", ("DecisionListResponse",)),
    ("evidence", ("IngestResult",)),
)
"""The schemas the resources return, by the module of ``ecp_client.models`` they open. A class
lives in the module of the first root (in this order) that reaches it, so a module imports only
from the modules before it."""
ROOTS = tuple(root for _, roots in AREAS for root in roots)
"""The schemas the resources return; the generation holds these and what they reach."""

HIDDEN = frozenset({"lock_token", "secret"})
"""Fields left out of a model's ``repr``, so that logging a model does not log a credential."""

HEADER = '''"""The API's {area} models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

'''
PACKAGE_HEADER = '''"""The API's response models, generated from clients/openapi.json: do not edit by hand.

One module per area of the API; every class is importable from here. ``make clients``
(scripts/generate_python_client.py) writes this package; a test fails when it is stale.
"""

'''


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _refs(node: object) -> Iterator[str]:
    """Every schema name ``node`` references, at any depth."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield _ref_name(node["$ref"])
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _is_class(schema: Mapping[str, Any]) -> bool:
    """A schema that becomes an attrs class: an object with properties of its own."""
    return bool(schema.get("properties")) and "oneOf" not in schema


def closure(schemas: Mapping[str, Any], roots: tuple[str, ...]) -> list[str]:
    """The class schemas reachable from ``roots`` (a discriminated union is not followed)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        schema = schemas[name]
        if "oneOf" in schema:
            continue
        todo.extend(_refs(schema))
    return _dependencies_first(schemas, sorted(name for name in seen if _is_class(schemas[name])))


def _dependencies_first(schemas: Mapping[str, Any], names: list[str]) -> list[str]:
    """``names`` ordered so that each class comes after the classes its fields name."""
    ordered: list[str] = []
    placed: set[str] = set()

    def place(name: str, path: tuple[str, ...]) -> None:
        if name in placed:
            return
        if name in path:
            raise SystemExit(f"schemas refer to each other: {' -> '.join((*path, name))}")
        for needed in sorted(set(_refs(schemas[name])) & set(names)):
            place(needed, (*path, name))
        placed.add(name)
        ordered.append(name)

    for name in names:
        place(name, ())
    return ordered


class _Types:
    """Python annotations for schema fragments."""

    def __init__(self, schemas: Mapping[str, Any], classes: set[str]) -> None:
        self._schemas = schemas
        self._classes = classes

    def of(self, schema: Mapping[str, Any]) -> str:
        if "$ref" in schema:
            return self._named(_ref_name(schema["$ref"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.of(option) for option in schema[key]]
                if "discriminator" in schema or "Any" in options:
                    return "dict[str, Any]" if "discriminator" in schema else "Any"
                return " | ".join(dict.fromkeys(options))
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.of(schema["allOf"][0])
        kinds = schema.get("type")
        if isinstance(kinds, list):
            return " | ".join(dict.fromkeys(self.of({**schema, "type": kind}) for kind in kinds))
        return self._scalar(kinds, schema)

    def _named(self, name: str) -> str:
        if name in self._classes:
            return name
        return self.of(self._schemas[name])

    def _scalar(self, kind: object, schema: Mapping[str, Any]) -> str:
        if kind == "string":
            return "datetime" if schema.get("format") == "date-time" else "str"
        simple = {"integer": "int", "number": "Decimal", "boolean": "bool", "null": "None"}
        if isinstance(kind, str) and kind in simple:
            return simple[kind]
        if kind == "array":
            return f"list[{self.of(schema.get('items', {}))}]"
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra and not schema.get("properties"):
                return f"dict[str, {self.of(extra)}]"
            return "dict[str, Any]"
        return "Any"


def _default(annotation: str, schema: Mapping[str, Any]) -> str:
    """The attrs default of an optional field: its schema default, else None (or empty)."""
    value = schema.get("default")
    if isinstance(value, list | dict):
        factory = "list" if isinstance(value, list) else "dict"
        return f"attrs.Factory({factory})" if not value else f"attrs.Factory(lambda: {value!r})"
    if value is not None and not isinstance(value, bool | int | float | str):
        return "None"
    if value is None and "None" not in annotation.split(" | "):
        return "None"
    if isinstance(value, float) and "Decimal" in annotation:
        return f'Decimal("{value!r}")'
    return repr(value)


def _docline(text: str) -> str:
    line = " ".join(text.split()).replace("\\", "\\\\").replace('"""', "'''")
    return line if line.endswith(".") else line + "."


def _model(name: str, schema: Mapping[str, Any], types: _Types) -> str:
    doc = _docline(schema.get("description") or f"The {name} schema.")
    lines = ["", "", "@attrs.frozen(kw_only=True)", f"class {name}:", f'    """{doc}"""', ""]
    required = set(schema.get("required", ()))
    for field, spec in sorted(schema["properties"].items()):
        if not field.isidentifier() or keyword.iskeyword(field):
            raise SystemExit(f"{name}.{field} is not a Python name: extend the generator")
        annotation = types.of(spec)
        default = None
        if field not in required:
            default = _default(annotation, spec)
            if default == "None" and "None" not in annotation.split(" | "):
                annotation += " | None"
        if field in HIDDEN:
            given = "" if default is None else f"default={default}, "
            annotation += f" = attrs.field({given}repr=False)"
        elif default is not None:
            annotation += f" = {default}"
        lines.append(f"    {field}: {annotation}")
        if description := spec.get("description"):
            lines.append(f'    """{_docline(description)}"""')
    return "\n".join(lines)


def _area_of(schemas: Mapping[str, Any], names: list[str]) -> dict[str, str]:
    """Each class's module: the area of the first root, in ``AREAS`` order, that reaches it."""
    area: dict[str, str] = {}
    for module, roots in AREAS:
        for root in roots:
            for name in closure(schemas, (root,)):
                area.setdefault(name, module)
    return {name: area[name] for name in names}


def _module(area: str, names: list[str], home: Mapping[str, str], body: str) -> str:
    """One area's module: its imports (standard, attrs, the earlier areas' classes), classes."""
    lines = [HEADER.format(area=area)]
    for module, name in (("datetime", "datetime"), ("decimal", "Decimal"), ("typing", "Any")):
        if re.search(rf"\b{name}\b", body):
            lines.append(f"from {module} import {name}\n")
    lines.append("\nimport attrs\n")
    needed = sorted(
        {other for other in home if home[other] != area and re.search(rf"\b{other}\b", body)}
    )
    lines.extend(f"from ecp_client.models.{home[other]} import {other}\n" for other in needed)
    exports = "".join(f'\n    "{name}",' for name in names)
    lines.append(f"\n__all__ = [{exports}\n]\n{body}\n")
    return "".join(lines)


def render_models(document: Mapping[str, Any]) -> dict[str, str]:
    """The text of each module of ``models`` (before formatting), by file name."""
    schemas = document["components"]["schemas"]
    names = closure(schemas, ROOTS)
    types = _Types(schemas, set(names))
    home = _area_of(schemas, names)
    files: dict[str, str] = {}
    imports = []
    for area, _ in AREAS:
        mine = [name for name in names if home[name] == area]
        if not mine:
            continue
        body = "".join(_model(name, schemas[name], types) for name in mine)
        files[f"{area}.py"] = _module(area, mine, home, body)
        imports.append(f"from ecp_client.models.{area} import {', '.join(mine)}\n")
    exports = "".join(f'\n    "{name}",' for name in names)
    files["__init__.py"] = f"{PACKAGE_HEADER}{''.join(imports)}\n__all__ = [{exports}\n]\n"
    return files


_ROW = re.compile(r"^\| `([a-z0-9_]+)` \| (\d{3}|varies) \| (.+) \|$")


def problem_codes(errors_md: str) -> list[tuple[str, str]]:
    """(code, meaning) of every HTTP answer the server declares (not run failure reasons)."""
    answers = errors_md.split("## Run failure reasons", 1)[0]
    return [(m[1], m[3]) for line in answers.splitlines() if (m := _ROW.match(line))]


def class_name(code: str) -> str:
    """``migration_not_possible`` -> ``MigrationNotPossible``."""
    return "".join(part.capitalize() for part in code.split("_"))


def render_problems(errors_md: str) -> str:
    """The text of ``problems.py`` (before formatting)."""
    codes = problem_codes(errors_md)
    parts = [
        '"""One ``EcpError`` subclass per problem code the server declares: do not edit by hand.',
        "",
        "Generated by ``make clients`` (scripts/generate_python_client.py) from docs/api/errors.md;",
        "a test fails when it is stale. ``BY_CODE`` maps each code to its class.",
        '"""',
        "",
        "from ecp_client.errors import EcpError",
        "",
        "__all__ = [",
        *(f'    "{class_name(code)}",' for code, _ in codes),
        '    "BY_CODE",',
        "]",
    ]
    for code, meaning in codes:
        parts += ["", "", f"class {class_name(code)}(EcpError):"]
        parts += [f'    """{_docline(meaning)}"""', "", f'    code = "{code}"']
    parts += ["", "", "BY_CODE: dict[str, type[EcpError]] = {"]
    parts += [f'    "{code}": {class_name(code)},' for code, _ in codes]
    parts += ["}", '"""Each declared problem code\'s class."""', ""]
    return "\n".join(parts)


def unasync(source: str, origin: str) -> str:
    """The sync twin of an async module: ``async`` and ``await`` taken out, names swapped.

    Its docstring's first line (with "Async" words swapped) stays; the rest says where it came
    from.
    """
    _, docstring, code = source.split('"""', 2)
    title = docstring.strip().split("\n", 1)[0]
    for old, new in UNASYNC_WORDS:
        title = title.replace(old, new)
        code = code.replace(old, new)
    note = f"Generated from ``{origin}`` by ``make clients``: do not edit by hand (a test fails when stale)."
    return f'"""{title}\n\n{note}\n"""{code}'


def formatted(text: str, path: pathlib.Path) -> str:
    """``text`` as ``ruff`` fixes and formats it at ``path`` (the project's settings)."""
    ruff = pathlib.Path(sys.executable).with_name("ruff")
    where = str(path.relative_to(ROOT))
    # The fixes a generator would otherwise have to get right by hand: import order, a sorted
    # __all__, and `yield from` where unasync turned `async for ... yield` into a plain loop.
    for command in (
        ["check", "--fix-only", "--unsafe-fixes", "--select", "I,RUF022,UP028"],
        ["format"],
    ):
        done = subprocess.run(  # noqa: S603 - this venv's ruff on our own text
            [ruff, *command, "--stdin-filename", where, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        text = done.stdout
    return text


def rendering() -> dict[pathlib.Path, str]:
    """Each generated file and its text, as ``make clients`` writes them."""
    document = json.loads(OPENAPI.read_text(encoding="utf-8"))
    errors_md = ERRORS.read_text(encoding="utf-8")
    files = {
        MODELS / name: formatted(text, MODELS / name)
        for name, text in render_models(document).items()
    }
    files[PROBLEMS] = formatted(render_problems(errors_md), PROBLEMS)
    for source, twin in UNASYNC.items():
        text = unasync(source.read_text(encoding="utf-8"), source.name)
        files[twin] = formatted(text, twin)
    return files


def main() -> int:
    """Write the generated files (or, with ``--check``, say which are stale)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args()
    stale = []
    for path, text in rendering().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        sys.stdout.write(f"{'stale' if args.check else 'wrote'} {path.relative_to(ROOT)}\n")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
