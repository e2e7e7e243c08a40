"""IdentityBindingRepository and activation: the kit's suites on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.accounts import ActivationConformance, IdentityBindingConformance


class TestIdentityBindings(OnEveryStore, IdentityBindingConformance):
    pass


class TestActivation(OnEveryStore, ActivationConformance):
    pass
