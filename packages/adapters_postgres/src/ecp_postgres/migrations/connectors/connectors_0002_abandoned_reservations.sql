-- depends: connectors_0001_connectors
-- Reservations a dead process left behind (ADR 0050): a test row carries its scope's run key
-- and, while it holds a reservation, when it was made; the sweep settles the ones older than
-- twice the test timeout plus a margin, oldest first, FOR UPDATE SKIP LOCKED over the test and
-- its scope row. Rows written before this migration are filled in from their record.
ALTER TABLE ecp_connector_tests
    ADD COLUMN run_key     text,
    ADD COLUMN reserved_at timestamptz;
UPDATE ecp_connector_tests
   SET run_key = coalesce(record->>'run_id', ''),
       reserved_at = CASE WHEN record->>'state' = 'reserved'
                          THEN (record->>'created_at')::timestamptz END;
ALTER TABLE ecp_connector_tests ALTER COLUMN run_key SET NOT NULL;
CREATE INDEX ecp_connector_tests_reserved
    ON ecp_connector_tests (reserved_at) WHERE reserved_at IS NOT NULL;
