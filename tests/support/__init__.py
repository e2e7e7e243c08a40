"""Shared test helpers (strategies and builders)."""
