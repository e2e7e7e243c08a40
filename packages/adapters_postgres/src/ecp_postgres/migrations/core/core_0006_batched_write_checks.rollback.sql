DROP FUNCTION ecp_expect_rows(bigint[], bigint[]);
