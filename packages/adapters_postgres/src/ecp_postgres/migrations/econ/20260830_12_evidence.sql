-- depends: core_0001_graphs_deployments_runs
-- Economic evidence: execution and outcome events, charge revisions, source inventories and
-- outcome definitions. Events are keyed by (tenant_id, event_id) and keep the digest of their
-- canonical JSON, so a replay is recognised (same digest) or refused (other digest). A charge id
-- belongs to one execution event of its tenant (the unique index below).
-- Ids use the "C" collation: equality is byte equality and the tie-breaks of the tally (latest
-- revision, latest outcome, by event_id) order by code point, exactly like the in-memory adapter.
-- Money is unconstrained `numeric` (exact). Dimensions, metadata and outcome values are `jsonb`:
-- its number equality (1 = 1.0, true <> 1) is the type-aware equality the tally groups and
-- judges by. A definition's predicate is `json`, kept exactly as written (jsonb would rewrite
-- 1e300 as 300 digits, no longer a valid float when read back).

CREATE TABLE ecp_evidence_executions (
    tenant_id         text COLLATE "C" NOT NULL,
    event_id          text COLLATE "C" NOT NULL,
    digest            text        NOT NULL,
    workflow_id       text COLLATE "C" NOT NULL,
    workflow_version  text COLLATE "C" NOT NULL,
    occurred_at       timestamptz NOT NULL,
    run_id            text COLLATE "C",
    step_id           text COLLATE "C",
    attempt           integer     NOT NULL CHECK (attempt >= 1),
    subject_id        text COLLATE "C",
    dimensions        jsonb       NOT NULL,
    cost_usd          numeric     CHECK (cost_usd >= 0),
    cost_measurement  text        NOT NULL
        CHECK (cost_measurement IN ('measured', 'estimated', 'unmeasured')),
    cost_role         text        NOT NULL CHECK (cost_role IN ('charge', 'summary')),
    charge_id         text COLLATE "C",
    source_window_id  text COLLATE "C",
    join_key          text COLLATE "C",
    metadata          jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, event_id)
);

-- Charge ownership: one execution event per (tenant, charge id).
CREATE UNIQUE INDEX ecp_evidence_executions_charge
    ON ecp_evidence_executions (tenant_id, charge_id) WHERE charge_id IS NOT NULL;
-- The tally's window.
CREATE INDEX ecp_evidence_executions_window
    ON ecp_evidence_executions (tenant_id, workflow_id, occurred_at);
-- Erasure by run id or join key.
CREATE INDEX ecp_evidence_executions_run
    ON ecp_evidence_executions (tenant_id, run_id) WHERE run_id IS NOT NULL;
CREATE INDEX ecp_evidence_executions_join_key
    ON ecp_evidence_executions (tenant_id, join_key) WHERE join_key IS NOT NULL;

CREATE TABLE ecp_evidence_outcomes (
    tenant_id            text COLLATE "C" NOT NULL,
    event_id             text COLLATE "C" NOT NULL,
    digest               text        NOT NULL,
    workflow_id          text COLLATE "C" NOT NULL,
    workflow_version     text COLLATE "C" NOT NULL,
    run_id               text COLLATE "C" NOT NULL,
    outcome_type         text COLLATE "C" NOT NULL,
    asserted_at          timestamptz NOT NULL,
    value                jsonb       NOT NULL,
    outcome_measurement  text        NOT NULL
        CHECK (outcome_measurement IN ('measured', 'inferred')),
    maturity             text        NOT NULL CHECK (maturity IN ('final', 'provisional')),
    subject_id           text COLLATE "C",
    join_key             text COLLATE "C",
    PRIMARY KEY (tenant_id, event_id)
);

-- The deciding outcome of a run: the latest assertion of the defined type.
CREATE INDEX ecp_evidence_outcomes_deciding
    ON ecp_evidence_outcomes
    (tenant_id, workflow_id, workflow_version, run_id, outcome_type, asserted_at, event_id);
-- Erasure by run id or join key.
CREATE INDEX ecp_evidence_outcomes_run ON ecp_evidence_outcomes (tenant_id, run_id);
CREATE INDEX ecp_evidence_outcomes_join_key
    ON ecp_evidence_outcomes (tenant_id, join_key) WHERE join_key IS NOT NULL;

CREATE TABLE ecp_evidence_revisions (
    tenant_id         text COLLATE "C" NOT NULL,
    event_id          text COLLATE "C" NOT NULL,
    digest            text        NOT NULL,
    charge_id         text COLLATE "C" NOT NULL,
    revised_at        timestamptz NOT NULL,
    cost_usd          numeric     CHECK (cost_usd >= 0),
    cost_measurement  text        NOT NULL
        CHECK (cost_measurement IN ('measured', 'estimated', 'unmeasured')),
    PRIMARY KEY (tenant_id, event_id)
);

-- The pricing revision of a charge: the latest one.
CREATE INDEX ecp_evidence_revisions_latest
    ON ecp_evidence_revisions (tenant_id, charge_id, revised_at, event_id);

CREATE TABLE ecp_evidence_inventories (
    tenant_id         text COLLATE "C" NOT NULL,
    event_id          text COLLATE "C" NOT NULL,
    digest            text        NOT NULL,
    workflow_id       text COLLATE "C" NOT NULL,
    workflow_version  text COLLATE "C" NOT NULL,
    capture_start     timestamptz NOT NULL,
    capture_end       timestamptz NOT NULL,
    terminal_run_ids  jsonb       NOT NULL,
    windows           jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, event_id)
);

CREATE INDEX ecp_evidence_inventories_version
    ON ecp_evidence_inventories (tenant_id, workflow_id, workflow_version, capture_start);

CREATE TABLE ecp_evidence_definitions (
    tenant_id         text COLLATE "C" NOT NULL,
    workflow_id       text COLLATE "C" NOT NULL,
    workflow_version  text COLLATE "C" NOT NULL,
    outcome_type      text COLLATE "C" NOT NULL,
    predicate         json        NOT NULL,
    digest            text        NOT NULL,
    created_at        timestamptz NOT NULL,
    created_by        text        NOT NULL,
    PRIMARY KEY (tenant_id, workflow_id, workflow_version)
);
