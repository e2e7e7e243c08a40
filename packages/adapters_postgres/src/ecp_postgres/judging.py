"""A run's verdict in SQL: the outcome definition's predicate applied to the deciding value.

One small integer: 0 success, 4 failure, 8 unresolved, plus 2 when the deciding outcome was
inferred and 1 when provisional. ``JUDGE`` expects the outcome as ``o`` and the parsed
definition as ``d`` (``kind``, ``expected`` jsonb, ``threshold`` numeric). It is the SQL twin
of :func:`ecp_core.debugger.tally.judge`; the contract suite proves they agree.
"""

SUCCESS, FAILURE, UNRESOLVED = 0, 4, 8

JUDGE = f"""CASE
            WHEN d.kind = 'equals' THEN
                CASE WHEN o.value = d.expected THEN {SUCCESS} ELSE {FAILURE} END
            WHEN jsonb_typeof(o.value) <> 'number' OR d.threshold IS NULL THEN {UNRESOLVED}
            WHEN CASE d.kind
                WHEN 'at_least' THEN o.value::numeric >= d.threshold
                WHEN 'greater_than' THEN o.value::numeric > d.threshold
                WHEN 'at_most' THEN o.value::numeric <= d.threshold
                WHEN 'less_than' THEN o.value::numeric < d.threshold
            END THEN {SUCCESS}
            WHEN d.kind IN ('at_least', 'greater_than', 'at_most', 'less_than') THEN {FAILURE}
            ELSE {UNRESOLVED}
        END
        + CASE WHEN o.outcome_measurement = 'inferred' THEN 2 ELSE 0 END
        + CASE WHEN o.maturity = 'provisional' THEN 1 ELSE 0 END"""
