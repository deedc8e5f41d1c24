-- The workers as shared memory shows them.

CREATE OR REPLACE FUNCTION awa.maintenance_worker_status(
    OUT database name, OUT pid int, OUT state text, OUT state_since timestamptz,
    OUT started_at timestamptz, OUT leader_since timestamptz,
    OUT rotations jsonb, OUT prunes jsonb,
    OUT folds_run bigint, OUT folds_stood_down bigint, OUT rows_folded bigint,
    OUT rows_trimmed bigint, OUT last_fold_at timestamptz, OUT pin_holder text,
    OUT auto_flip text, OUT auto_flip_window_since timestamptz,
    OUT errors bigint, OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_status'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT * FROM awa.maintenance_worker_status();

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors';
