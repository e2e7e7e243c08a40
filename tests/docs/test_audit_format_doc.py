"""docs/audit-format.md lists exactly what the code writes: statuses, fields and digest versions.

An outside verifier is written from this page, so every list on it that names values is read
back here and compared with the enum or constant it documents.
"""

import re

import attrs
import pytest
from tests.support.audit_doc import DOC, documented_statuses, section, table_codes

from ecp_core.audit.chain import ENVELOPE_FIELDS
from ecp_core.audit.record import (
    DIGEST_VERSION,
    LEGACY_DIGEST_VERSION,
    PII_FIELDS,
    SALTED_DIGEST_VERSION,
    NodeAuditRecord,
)
from ecp_core.types import AttemptStatus

pytestmark = [pytest.mark.unit, pytest.mark.spec("C4 audit-format-doc")]

TEXT = DOC.read_text(encoding="utf-8")
COUNTS = {"nine": 9, "eleven": 11}


def test_the_status_list_is_the_enum_in_its_order():
    assert documented_statuses() == [status.value for status in AttemptStatus]
    assert "escalated" in documented_statuses()


def test_the_parser_sees_a_missing_status():
    last = [s.value for s in AttemptStatus][-1]
    shortened = TEXT.replace(f"| `{last}` |", f"| {last} |")
    assert documented_statuses(shortened) == [s.value for s in AttemptStatus][:-1]


@pytest.mark.spec("§2.3 node-audit-record")
def test_the_field_table_lists_every_field_of_the_record():
    documented = table_codes(section("Record fields"))
    assert sorted(documented) == sorted(field.name for field in attrs.fields(NodeAuditRecord))


def listed_after(phrase):
    """The backticked, comma-separated names that follow ``phrase`` (across line breaks)."""
    match = re.search(re.escape(phrase) + r"[^`]*`([^`]+)`", TEXT)
    assert match, phrase
    return tuple(name.strip() for name in match.group(1).replace("\n", " ").split(","))


def test_the_envelope_and_personal_data_lists_are_the_codes():
    envelope = listed_after("The **envelope** is these eleven fields")
    personal = listed_after("The nine **personal-data fields** are")
    assert envelope == ENVELOPE_FIELDS
    assert personal == PII_FIELDS
    assert (COUNTS["eleven"], COUNTS["nine"]) == (len(ENVELOPE_FIELDS), len(PII_FIELDS))


@pytest.mark.spec("§9 digest-versions", "§9 salted-commitments")
def test_the_digest_versions_are_the_codes():
    row = next(line for line in TEXT.splitlines() if line.startswith("| `digest_version` |"))
    versions = {int(number) for number in re.findall(r"\b(\d+)\b", row.split("|")[2])}
    assert versions == {LEGACY_DIGEST_VERSION, DIGEST_VERSION, SALTED_DIGEST_VERSION}
