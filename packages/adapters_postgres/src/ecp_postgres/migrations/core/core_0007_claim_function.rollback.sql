DROP FUNCTION ecp_claim_runnable(timestamptz, integer);
