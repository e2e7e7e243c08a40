"""Connectors to external backends: settings-defined and stored ones, and cost-capped tests (ADR 0044)."""
