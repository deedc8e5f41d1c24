-- 0.9: a completion is one row (docs/storage.md §A.15). A closure carries the job's
-- terminal state (NULL while the job goes on: retried, or rescued into a retry) and the
-- error of a final failure; the queue, priority, kind, attempt and created_at of the
-- outcome are its receipt's, in the same claim child. 0.9 writes no done entry for an
-- attempt it closes. Run by a fresh install and by the 0.8 -> 0.9 upgrade alike: the
-- closures written before 0.9 read state NULL (no default), and their done entries
-- count them.
ALTER TABLE awa.lease_claim_closures
    ADD COLUMN state text CHECK (state IN ('completed', 'failed', 'cancelled')),
    ADD COLUMN error text;
