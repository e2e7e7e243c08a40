"""Server-signed attestations, first write wins per (tenant, correlation id) (ADR 0041)."""
