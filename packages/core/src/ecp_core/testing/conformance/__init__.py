"""Conformance suites, one module per port: subclass a suite and override its fixture."""
