"""docs/api/permissions.md is the rendering of ROLE_PERMISSIONS and the routes, and never drifts."""

import pathlib

import pytest

from ecp_core.permissions import ROLE_PERMISSIONS, Permission
from ecp_core.types import ServiceRole
from ecp_http.openapi.permissions_doc import declared_operations, main, render

pytestmark = pytest.mark.unit

DOC = pathlib.Path(__file__).parents[2] / "docs" / "api" / "permissions.md"
REGENERATE = "python -m ecp_http.openapi.permissions_doc --output docs/api/permissions.md"


@pytest.mark.spec("C2 permission-table")
def test_the_committed_document_is_the_rendering():
    assert DOC.read_text(encoding="utf-8") == render(), f"regenerate it: {REGENERATE}"


@pytest.mark.spec("C2 permission-table")
def test_every_route_and_permission_appears():
    text = render()
    for op in declared_operations():
        assert f"| {op.method} | `{op.path}` |" in text, (op.method, op.path)
    for permission in Permission:
        assert f"| `{permission.value}` |" in text


def test_main_writes_the_document(tmp_path, capsys):
    target = tmp_path / "permissions.md"
    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render()
    assert main([]) == 0
    assert capsys.readouterr().out == render()


def roles_with(permission):
    return {role for role in ServiceRole if permission in ROLE_PERMISSIONS[role]}


@pytest.mark.spec("§5 role-rules")
def test_the_specifications_rules_hold_exactly():
    admin = {ServiceRole.ADMIN}
    assert ROLE_PERMISSIONS[ServiceRole.ADMIN] == frozenset(Permission)
    assert roles_with(Permission.BILL_IMPORT) == admin
    assert roles_with(Permission.REPORT_READ) == {
        ServiceRole.ADMIN,
        ServiceRole.ANALYST,
        ServiceRole.APPROVER,
    }
    assert roles_with(Permission.OUTCOME_DEFINE) == admin
    assert roles_with(Permission.BILLING_CHECKOUT) == admin
    assert roles_with(Permission.RETENTION_ADMIN) == admin
    assert roles_with(Permission.API_KEY_ADMIN) == admin
    assert ServiceRole.VIEWER not in roles_with(Permission.DEBUGGER_READ)


@pytest.mark.spec("C2 permission-table")
def test_api_key_routes_are_admin_only():
    routes = {(op.method, op.path): op.permission for op in declared_operations()}
    for route in [
        ("POST", "/v1/api-keys"),
        ("GET", "/v1/api-keys"),
        ("DELETE", "/v1/api-keys/{key_id}"),
    ]:
        assert routes[route] is Permission.API_KEY_ADMIN
