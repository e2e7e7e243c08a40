-- depends: core_0005_wakeup_notifications
-- Batched writes (ADR 0059): a unit of work's writes leave as one statement whose main query
-- passes each part's row count here with what it must be. A count that differs raises SQLSTATE
-- EC001 with the part's index as the detail, so the statement fails inside the database and a
-- COMMIT sent right behind it (one round trip) can never commit a refused write.

CREATE FUNCTION ecp_expect_rows(counts bigint[], expected bigint[]) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(counts, 1), 0) LOOP
        IF expected[i] IS NOT NULL AND counts[i] <> expected[i] THEN
            RAISE EXCEPTION 'batched write % affected % rows, not %', i - 1, counts[i], expected[i]
                USING ERRCODE = 'EC001', DETAIL = (i - 1)::text;
        END IF;
    END LOOP;
    RETURN array_length(counts, 1);
END
$$;
