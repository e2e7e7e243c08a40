"""docs/spec-map.md is the rendering of the ``spec`` markers and the rule catalogue, and never drifts."""

import importlib.util
import pathlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.spec_rules import RULES, SECTIONS

from ecp_core.audit import crypto_erase

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).parents[2]
DOC = ROOT / "docs" / "spec-map.md"
_LOADER = importlib.util.spec_from_file_location("spec_map", ROOT / "scripts" / "spec_map.py")
assert _LOADER is not None
assert _LOADER.loader is not None
spec_map = importlib.util.module_from_spec(_LOADER)
_LOADER.loader.exec_module(spec_map)


def test_the_committed_map_is_the_rendering():
    tests, modules = spec_map.collect()
    assert DOC.read_text(encoding="utf-8") == spec_map.render(tests, modules), (
        f"regenerate it: {spec_map.REGENERATE}"
    )


def test_rule_ids_name_a_known_section_and_slugs_are_unique():
    slugs = [rule.split(" ", 1)[1] for rule in RULES]
    assert len(slugs) == len(set(slugs))
    for rule in RULES:
        assert spec_map.section_of(rule) in SECTIONS, rule


@pytest.mark.parametrize("bad", ["crypto-erase-v2", "§3.2 Crypto", "§3.2  x", "S3 x", "C1"])
def test_a_malformed_rule_id_is_refused(bad):
    with pytest.raises(ValueError, match="not a rule id"):
        spec_map.section_of(bad)


def test_a_marker_naming_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match=re.escape("tests/x.py::test_a: '§3.2 no-such-rule'")):
        spec_map.render({"tests/x.py::test_a": ["§3.2 no-such-rule"]}, {})


def test_without_tests_every_rule_is_untested():
    text = spec_map.render({}, {})
    assert text.count("| **untested** |") == len(RULES)
    assert f"{len(RULES)} rules; 0 checked by 0 marked tests; {len(RULES)} untested." in text


def test_a_rule_shows_its_tests_and_the_modules_they_use_without_plumbing():
    rule = "§3.2 crypto-erase-v2"
    text = spec_map.render(
        {"tests/b.py::test_b": [rule], "tests/a.py::test_a": [rule]},
        {"tests/a.py::test_a": ["ecp_core.audit.chain", "ecp_core.errors"]},
    )
    (row,) = [line for line in text.splitlines() if line.startswith(f"| `{rule}` |")]
    assert row.endswith("| `ecp_core.audit.chain` | `tests/a.py::test_a`<br>`tests/b.py::test_b` |")


def test_the_hand_kept_homes_name_modules_that_exist():
    assert spec_map.missing_homes() == []
    assert set(spec_map.HOMES) <= set(RULES)


def _helper():
    return crypto_erase


def _a_test_using_a_helper():
    assert _helper()


def test_modules_are_read_from_the_test_and_the_helpers_it_calls():
    assert spec_map.referenced_modules(_a_test_using_a_helper) == {crypto_erase.__module__}
    assert spec_map.referenced_modules(_a_test_using_a_helper, depth=0) == set()


nodeids = st.from_regex(r"tests/[a-z]{1,3}\.py::test_[a-z]{1,3}", fullmatch=True)


@given(st.dictionaries(nodeids, st.lists(st.sampled_from(sorted(RULES)), min_size=1, max_size=3)))
def test_the_rendering_lists_each_marked_test_once_and_ignores_input_order(marked):
    text = spec_map.render(marked, {})
    assert spec_map.render(dict(reversed(marked.items())), {}) == text
    named = {rule for rules in marked.values() for rule in rules}
    assert text.count("| **untested** |") == len(RULES) - len(named)
    for nodeid, rules in marked.items():
        assert text.count(f"`{nodeid}`") == len(set(rules))
