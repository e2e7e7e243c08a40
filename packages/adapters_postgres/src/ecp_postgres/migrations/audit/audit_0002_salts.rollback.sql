-- Refused (the CHECK fails, nothing changes) once a version 3 record exists: a build without
-- ADR 0047 could neither verify nor erase it.
DROP TABLE ecp_audit_settings;
DROP TABLE ecp_audit_salts;

ALTER TABLE ecp_audit_records DROP CONSTRAINT ecp_audit_records_digest_version_check;
ALTER TABLE ecp_audit_records ADD CONSTRAINT ecp_audit_records_digest_version_check
    CHECK (digest_version IN (1, 2));
