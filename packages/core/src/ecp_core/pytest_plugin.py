"""A pytest plugin for projects that run the kit's suites: registers the markers they carry.

Installing ``ecp-core`` registers it as a ``pytest11`` entry point, so every pytest run in an
environment that has ECP loads it: it therefore lives outside :mod:`ecp_core.testing` and imports
nothing but pytest (the kit itself needs Hypothesis, the ``testing`` extra). By hand:
``pytest -p ecp_core.pytest_plugin``.
"""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``spec`` marker, so ``--strict-markers`` accepts the kit's tests."""
    config.addinivalue_line(
        "markers", "spec(*rule_ids): the specification rules the test checks (docs/spec-map.md)"
    )
