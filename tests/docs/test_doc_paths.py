"""Every path a document names resolves inside the checkout (issue 33).

The documents are README.md, every docs/**/*.md and the READMEs under the top-level folders
(each page mkdocs.yml's nav lists must exist too). A document fails, naming itself and the line,
when

- a relative Markdown link (inline ``[x](path)`` or a reference ``[x]: path``) names a file or
  folder that does not exist, resolved from the document's folder as Markdown does (``http(s):``,
  ``mailto:`` and pure ``#anchor`` links are not paths; a ``#fragment`` is dropped);
- a repository path in its text, in backticks or not (one that starts with a top-level folder,
  ``packages/`` ... ``.ci/``, or is a root file such as ``Makefile``), does not exist; a path
  that starts with a package's name (``ecp_http/server/handlers/runs.py``) is looked for in that
  package's source folder;
- a dotted module path (``ecp_core.runs.engine.service``, ``ecp_http.config.settings.Settings``) is neither a
  module nor an attribute of one: the longest prefix that ``importlib.util.find_spec`` finds is
  imported and the rest is looked up with ``getattr`` (or in the class's annotations). A logger's
  name, one the packages pass to ``logging.getLogger`` as a literal, is a name too;
- it points outside the checkout: to a sibling folder (``../shared``) or to the specification or
  decision files a clone does not have.

A path with a placeholder in it (``<area>``, ``*``, ``…``, ``{id}``, ``...``) names many files or
none; it is skipped, not guessed at (``_PLACEHOLDERS``).
"""

import bisect
import importlib
import importlib.util
import inspect
import pathlib
import re
import tomllib
from collections.abc import Iterator

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).parents[2]

# The top-level folders and root files a repository path may start with.
_TOP_FOLDERS = ("packages", "tests", "docs", "bench", "scripts", "examples", ".ci")
_ROOT_FILES = ("Makefile", "pyproject.toml", "mkdocs.yml", "uv.lock")
# A path holding one of these is a pattern or a placeholder: skipped.
_PLACEHOLDERS = ("<", ">", "*", "…", "{", "}", "...")
# Texts that point outside the checkout, whatever surrounds them.
_OUTSIDE = re.compile(r"\.\./shared\b|spec/governed-workflow-service(?:\.md)?|\bCONTRACT\.md\b")
# The packages whose dotted paths are checked: import-linter's root packages.
_PACKAGES = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "root_packages"
    ]
)

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_PATH_CHARS = r"[\w./<>*{}…@+-]"
_REPO_PATH = re.compile(
    rf"(?<![\w./<>*{{}}…@+-])((?:{'|'.join(re.escape(top) for top in _TOP_FOLDERS)})/{_PATH_CHARS}*"
    rf"|(?:{'|'.join(re.escape(name) for name in _ROOT_FILES)})(?![\w.-]))"
)
_MODULE_PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(_PACKAGES)})(?:\.[A-Za-z_]\w*)+)")
_PACKAGE_PATH = re.compile(rf"(?<![\w./<>*{{}}…@+-])((?:{'|'.join(_PACKAGES)})/{_PATH_CHARS}*)")
# Where each package's source lives: packages/<folder>/src/<package>.
_SOURCES = {path.name: path for path in ROOT.glob("packages/*/src/*") if path.is_dir()}
_LOGGER = re.compile(r"getLogger\(\s*\"([\w.]+)\"")
_LOGGERS = frozenset(
    name
    for source in _SOURCES.values()
    for module in source.rglob("*.py")
    for name in _LOGGER.findall(module.read_text(encoding="utf-8"))
)


def documents() -> list[pathlib.Path]:
    """README.md, docs/**/*.md and the READMEs under the top-level folders."""
    found = {ROOT / "README.md", *(ROOT / "docs").rglob("*.md")}
    for top in _TOP_FOLDERS:
        found.update((ROOT / top).rglob("README.md"))
    return sorted(path for path in found if path.is_file())


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in re.finditer("\n", text))]


def _prose(text: str) -> str:
    """The text with each fenced code block blanked (kept as blank lines, so lines still count)."""
    lines = text.split("\n")
    fence: str | None = None
    for index, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
            lines[index] = ""
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            lines[index] = ""
    return "\n".join(lines)


def _is_placeholder(path: str) -> bool:
    return any(mark in path for mark in _PLACEHOLDERS)


def _inside(path: pathlib.Path) -> bool:
    return path.resolve().is_relative_to(ROOT.resolve())


def _trim(path: str) -> str:
    """A path as written in running text, without a fragment, a line or a test id after it."""
    path = re.split(r"#|::|:\d", path, maxsplit=1)[0]
    return path.rstrip(".,;:)'\"")


def _link_problem(document: pathlib.Path, target: str) -> str | None:
    if target.startswith("#") or _SCHEME.match(target):
        return None
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path or _is_placeholder(path):
        return None
    resolved = (ROOT / path.lstrip("/")) if path.startswith("/") else document.parent / path
    if not _inside(resolved):
        return f"link {target!r} points outside the checkout"
    if not resolved.exists():
        return f"link {target!r} names nothing that exists"
    return None


def _path_problem(path: str, base: pathlib.Path = ROOT) -> str | None:
    path = _trim(path)
    if _is_placeholder(path):
        return None
    if not _inside(base / path):
        return f"path {path!r} points outside the checkout"
    if not (base / path).exists():
        return f"path {path!r} does not exist"
    return None


def _has_attribute(owner: object, name: str) -> bool:
    if hasattr(owner, name):
        return True
    classes = owner.__mro__ if inspect.isclass(owner) else ()
    return any(name in inspect.get_annotations(cls) for cls in classes)


def _module_problem(dotted: str) -> str | None:
    if dotted in _LOGGERS:
        return None
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            continue
        owner: object = importlib.import_module(name)
        for attribute in parts[cut:]:
            if not _has_attribute(owner, attribute):
                return f"{dotted!r}: module {name!r} has no {'.'.join(parts[cut:])!r}"
            owner = getattr(owner, attribute, None)
        return None
    return f"{dotted!r} is no module"


def problems(document: pathlib.Path, text: str) -> list[str]:
    """``<document>:<line>: <what is wrong>`` for each broken path the document names, by line."""
    found: list[tuple[int, str]] = []

    def note(starts: list[int], offset: int, problem: str | None) -> None:
        if problem is not None:
            found.append((bisect.bisect_right(starts, offset), problem))

    starts = _line_starts(text)
    for match in _OUTSIDE.finditer(text):
        note(starts, match.start(), f"{match.group(0)!r} is not in the checkout")
    for match in _REPO_PATH.finditer(text):
        note(starts, match.start(), _path_problem(match.group(1)))
    for match in _PACKAGE_PATH.finditer(text):
        source = _SOURCES[match.group(1).split("/", 1)[0]].parent
        note(starts, match.start(), _path_problem(match.group(1), source))
    for match in _MODULE_PATH.finditer(text):
        note(starts, match.start(), _module_problem(match.group(1)))
    prose = _prose(text)  # links only outside code blocks; its lines are the text's lines
    prose_starts = _line_starts(prose)
    for pattern in (_INLINE_LINK, _REFERENCE_LINK):
        for match in pattern.finditer(prose):
            note(prose_starts, match.start(), _link_problem(document, match.group(1)))
    where = document.relative_to(ROOT) if document.is_relative_to(ROOT) else document
    return [f"{where}:{line}: {problem}" for line, problem in sorted(found, key=lambda x: x[0])]


def _nav_pages(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)


def test_the_documents_are_found():
    names = {path.relative_to(ROOT).as_posix() for path in documents()}
    assert {"README.md", "docs/architecture.md", "docs/decisions/README.md"} <= names
    assert "packages/core/README.md" in names
    assert len(names) >= 80


def _cases() -> list[object]:
    return [pytest.param(path, id=path.relative_to(ROOT).as_posix()) for path in documents()]


@pytest.mark.parametrize("document", _cases())
def test_every_path_a_document_names_resolves(document):
    found = problems(document, document.read_text(encoding="utf-8"))
    assert found == [], "\n".join(found)


def test_every_page_of_the_site_nav_exists():
    site = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = list(_nav_pages(site["nav"]))
    assert "index.md" in pages
    docs_dir = ROOT / site["docs_dir"]
    assert [
        page for page in pages if not _SCHEME.match(page) and not (docs_dir / page).is_file()
    ] == []


SYNTHETIC = """\
# A page

```sh
python -m ecp_core.demo   # a block before the links: their line numbers must not slip
```

Fine: [the guide](quickstart.md#start), [the ADRs](decisions/), [a site](https://example.org/x),
[mail](mailto:a@example.org), [up](#a-page), `docs/testing.md`, packages/core/README.md,
`Makefile`, the `ecp_http.requests` logger, `ecp_core.errors`, `ecp_core.errors.EcpError`,
`tests/docs/test_doc_paths.py::test_x`, `packages/core/src/ecp_core/<area>/model.py`,
`docs/decisions/00*.md`, `tests/{unit,e2e}/`, `ecp_http/server/handlers/runs.py`.

Broken: [gone](no-such-guide.md), [out](../../elsewhere/x.md), `docs/no-such-page.md`,
see tests/browser for the rest, `ecp_http/handler/runs.py`, `ecp_core.no_such_module`,
`ecp_core.errors.NoSuchError`, the rule in spec/governed-workflow-service.md and CONTRACT.md,
`../shared/notes.md`, [a
wrapped link](gone/again.md).

```
a block: [skipped](not-a-link.md) but docs/gone-from-a-block.md is a path
```
"""


def test_the_checker_finds_what_is_broken_and_passes_what_is_not():
    found = problems(ROOT / "docs" / "synthetic.md", SYNTHETIC)
    assert found == [
        "docs/synthetic.md:13: path 'docs/no-such-page.md' does not exist",
        "docs/synthetic.md:13: link 'no-such-guide.md' names nothing that exists",
        "docs/synthetic.md:13: link '../../elsewhere/x.md' points outside the checkout",
        "docs/synthetic.md:14: path 'tests/browser' does not exist",
        "docs/synthetic.md:14: path 'ecp_http/handler/runs.py' does not exist",
        "docs/synthetic.md:14: 'ecp_core.no_such_module': module 'ecp_core' has no 'no_such_module'",
        "docs/synthetic.md:15: 'spec/governed-workflow-service.md' is not in the checkout",
        "docs/synthetic.md:15: 'CONTRACT.md' is not in the checkout",
        "docs/synthetic.md:15: 'ecp_core.errors.NoSuchError': module 'ecp_core.errors' has no 'NoSuchError'",
        "docs/synthetic.md:16: '../shared' is not in the checkout",
        "docs/synthetic.md:16: link 'gone/again.md' names nothing that exists",
        "docs/synthetic.md:20: path 'docs/gone-from-a-block.md' does not exist",
    ]


def test_a_broken_path_in_a_real_document_fails_it():
    document = ROOT / "docs" / "architecture.md"
    text = document.read_text(encoding="utf-8") + "\nSee `docs/not-there.md`.\n"
    assert problems(document, text)[-1].endswith("path 'docs/not-there.md' does not exist")
