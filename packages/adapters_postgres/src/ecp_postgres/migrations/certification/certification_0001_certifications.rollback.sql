DROP TABLE ecp_certification_events;
DROP FUNCTION ecp_certification_events_append_only();
DROP TABLE ecp_certifications;
