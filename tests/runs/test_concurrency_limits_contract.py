"""Concurrency limits at the claim (ADR 0079): the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore, OnEveryStoreEachExample

from ecp_core.testing.conformance.limits import LimitClaimProperties, LimitConformance

pytestmark = [pytest.mark.contract, pytest.mark.spec("C14 limits-claim")]


class TestLimits(OnEveryStore, LimitConformance):
    pass


class TestLimitClaimProperties(OnEveryStoreEachExample, LimitClaimProperties):
    pass
