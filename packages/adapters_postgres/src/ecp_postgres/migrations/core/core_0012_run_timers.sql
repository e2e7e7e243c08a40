-- depends: core_0011_run_priority
-- Timers (ADR 0078): a run waiting at a wait node keeps the time it wakes in `wait_until`. The
-- column is nullable, so adding it rewrites no row. The wake sweep reads a partial index of
-- exactly the runs waiting on a timer, in due order: a sweep that finds nothing due reads one
-- index page, and a run stops costing the index anything once it woke.

ALTER TABLE ecp_runs ADD COLUMN wait_until timestamptz;

CREATE INDEX ecp_runs_timers_due ON ecp_runs (wait_until, run_id)
    WHERE status = 'WAITING_TIMER';
