"""Economic evidence: execution and outcome events, charge revisions, source inventories."""
