"""The economic debugger (observed-accounting/1): timeline, cohorts, breakage, report."""
