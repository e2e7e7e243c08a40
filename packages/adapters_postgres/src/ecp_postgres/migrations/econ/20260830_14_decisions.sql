-- depends: 20260830_13_provider_bills
-- Version decisions: immutable artifacts (the whole artifact as json, kept exactly as written)
-- with the columns that find them, and decision schedules whose next occurrence is claimed by
-- a conditional update of next_run_at.

CREATE TABLE ecp_decisions (
    tenant_id          text COLLATE "C" NOT NULL,
    decision_id        text COLLATE "C" PRIMARY KEY,
    workflow_id        text COLLATE "C" NOT NULL,
    baseline_version   text COLLATE "C" NOT NULL,
    candidate_version  text COLLATE "C" NOT NULL,
    start_at           timestamptz NOT NULL,
    end_at             timestamptz NOT NULL,
    request_digest     text        NOT NULL,
    fingerprint        text        NOT NULL,
    created_at         timestamptz NOT NULL,
    artifact           json        NOT NULL,
    UNIQUE (tenant_id, request_digest, fingerprint)
);

CREATE INDEX ecp_decisions_history ON ecp_decisions (tenant_id, created_at, decision_id);
CREATE INDEX ecp_decisions_subject
    ON ecp_decisions (tenant_id, workflow_id, baseline_version, candidate_version, start_at, end_at);

CREATE TABLE ecp_decision_schedules (
    schedule_id        text COLLATE "C" PRIMARY KEY,
    tenant_id          text COLLATE "C" NOT NULL,
    workflow_id        text COLLATE "C" NOT NULL,
    baseline_version   text COLLATE "C" NOT NULL,
    candidate_version  text COLLATE "C" NOT NULL,
    interval_seconds   integer     NOT NULL,
    window_seconds     integer     NOT NULL,
    policy             json        NOT NULL,
    name               text,
    created_at         timestamptz NOT NULL,
    created_by         text        NOT NULL,
    next_run_at        timestamptz NOT NULL,
    last_run_at        timestamptz,
    last_decision_id   text,
    last_error         text
);

CREATE INDEX ecp_decision_schedules_due ON ecp_decision_schedules (next_run_at, schedule_id);
CREATE INDEX ecp_decision_schedules_tenant ON ecp_decision_schedules (tenant_id, created_at);
