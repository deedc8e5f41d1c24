-- The ring cursor (0.8): the ledger's newest row.

-- A C function (src/dataplane/probes.c): the ledger table's newest row by its primary key,
-- under the calling statement's snapshot (ORDER BY generation DESC LIMIT 1).
CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE C STABLE ROWS 1
AS 'MODULE_PATHNAME', 'awa_ring_cursor_ledger';
