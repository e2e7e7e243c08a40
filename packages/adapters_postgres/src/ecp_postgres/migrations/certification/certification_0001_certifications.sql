-- depends: backtests_0001_backtests
-- Certifications of application builds (spec "Certification resources"; ADR 0043). One row per
-- (tenant, app_name, app_commit, image_digest); the record is the JSON of
-- ecp_core.certification.model.Certification, beside the columns that find, filter and order it.
-- Transitions lock the row (SELECT ... FOR UPDATE), so moves on one certification serialize.
-- Events are append-only: a trigger refuses every UPDATE and DELETE of an event row.
CREATE TABLE ecp_certifications (
    certification_id  text COLLATE "C" PRIMARY KEY,
    tenant_id         text        NOT NULL,
    app_name          text        NOT NULL,
    app_commit        text        NOT NULL,
    image_digest      text        NOT NULL,
    state             text        NOT NULL
        CHECK (state IN ('buildable', 'test_deployable', 'certified', 'promoted', 'revoked')),
    record            jsonb       NOT NULL,
    UNIQUE (tenant_id, app_name, app_commit, image_digest)
);
CREATE INDEX ecp_certifications_by_tenant ON ecp_certifications (tenant_id, certification_id);

CREATE TABLE ecp_certification_events (
    certification_id  text COLLATE "C" NOT NULL REFERENCES ecp_certifications (certification_id),
    sequence          integer     NOT NULL CHECK (sequence >= 1),
    tenant_id         text        NOT NULL,
    event             jsonb       NOT NULL,
    PRIMARY KEY (certification_id, sequence)
);

CREATE FUNCTION ecp_certification_events_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'certification events are append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER ecp_certification_events_append_only
    BEFORE UPDATE OR DELETE ON ecp_certification_events
    FOR EACH ROW EXECUTE FUNCTION ecp_certification_events_append_only();
