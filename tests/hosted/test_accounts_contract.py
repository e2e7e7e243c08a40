"""IdentityBindingRepository and activation: the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.accounts import ActivationConformance, IdentityBindingConformance

pytestmark = pytest.mark.contract


class TestIdentityBindings(OnEveryStore, IdentityBindingConformance):
    pass


class TestActivation(OnEveryStore, ActivationConformance):
    pass
