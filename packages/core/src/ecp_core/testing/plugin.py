"""A pytest plugin for projects that run the kit's suites: registers the markers they carry.

Load it with ``pytest -p ecp_core.testing.plugin`` or ``pytest_plugins`` in a top-level
``conftest.py`` (installing ``ecp-core[testing]`` also registers it as a ``pytest11`` entry point).
"""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``spec`` marker, so ``--strict-markers`` accepts the kit's tests."""
    config.addinivalue_line(
        "markers", "spec(*rule_ids): the specification rules the test checks (docs/spec-map.md)"
    )
