-- depends: audit_0001_records_and_heads
-- Salted commitments, digest_version 3 (ADR 0047). A version 3 record's salt lives apart from the
-- record, one row per record; erasure deletes that row in the transaction that nulls the record's
-- personal data. Tenants choose the version of their new records in ecp_audit_settings.

ALTER TABLE ecp_audit_records DROP CONSTRAINT ecp_audit_records_digest_version_check;
ALTER TABLE ecp_audit_records ADD CONSTRAINT ecp_audit_records_digest_version_check
    CHECK (digest_version IN (1, 2, 3));

CREATE TABLE ecp_audit_salts (
    audit_id  text  PRIMARY KEY REFERENCES ecp_audit_records (audit_id) ON DELETE CASCADE,
    salt      bytea NOT NULL CHECK (octet_length(salt) = 32)
);

CREATE TABLE ecp_audit_settings (
    tenant_id       text        PRIMARY KEY,
    digest_version  smallint    NOT NULL CHECK (digest_version IN (2, 3)),
    updated_at      timestamptz,
    updated_by      text
);
