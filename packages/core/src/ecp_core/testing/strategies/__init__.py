"""Hypothesis strategies shared by the core's tests, the adapters' suites and applications."""
