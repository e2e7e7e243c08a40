"""Child runs: how a subgraph node starts one, finds its deployment, and records its end."""
