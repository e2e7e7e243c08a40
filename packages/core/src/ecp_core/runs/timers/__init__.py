"""Wait nodes: a run waits durably until a time, then moves on (ADR 0078)."""
