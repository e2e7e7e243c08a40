"""Provider-bill reconciliation (measured-cost-proportional/1)."""
