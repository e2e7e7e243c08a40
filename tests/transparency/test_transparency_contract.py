"""The transparency log's storage: the kit's suite on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.transparency import TransparencyConformance

pytestmark = pytest.mark.contract


class TestTransparency(OnEveryStore, TransparencyConformance):
    pass
