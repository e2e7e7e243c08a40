-- Refused while a pending approval has rules: the older schema would resolve it on the first
-- approval by anyone, whoever started its run.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM ecp_approvals
                WHERE status = 'pending'
                  AND (min_approvals > 1 OR forbid_self_approval
                       OR approver_roles IS NOT NULL OR approver_subjects IS NOT NULL)) THEN
        RAISE EXCEPTION 'pending approvals have approval rules: approvals_0003 cannot be rolled back';
    END IF;
END $$;
ALTER TABLE ecp_approvals
    DROP COLUMN approvals,
    DROP COLUMN run_started_by,
    DROP COLUMN approver_subjects,
    DROP COLUMN approver_roles,
    DROP COLUMN forbid_self_approval,
    DROP COLUMN min_approvals;
