"""Port contract suites: the conformance kit (:mod:`ecp_core.testing`) run against every
implementation, in memory and on PostgreSQL (the mixins in :mod:`tests.contract.stores`).

A behaviour the two disagree on is a bug in one of them.
"""
