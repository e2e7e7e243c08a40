"""Randomized rollouts: arms of graph versions, deterministic assignment, verification (ADR 0089)."""
