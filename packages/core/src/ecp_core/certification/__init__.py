"""Certification of an application build: states, blockers, overrides and its append-only events (ADR 0043)."""
