DROP INDEX ecp_connector_tests_reserved;
ALTER TABLE ecp_connector_tests DROP COLUMN reserved_at, DROP COLUMN run_key;
