-- Unique jobs (docs/storage.md §A.14): one row per job enqueued with a unique_key, the
-- key's only record. Insert-only on the enqueue path; the maintenance leader deletes
-- the rows of jobs the data plane no longer holds (awa.purge_unique_keys), in batches,
-- and stands down while the MVCC horizon is pinned, so no dead row version is written
-- here while one could not be reclaimed. No unique index: uniqueness is decided under
-- a private lock on (queue, key) by awa_internal.unique_job, so that nothing here is an
-- index whose dead entries a pinned horizon piles up.
CREATE TABLE awa.unique_keys (
    queue      text NOT NULL,
    unique_key text NOT NULL,
    job_id     bigint NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX unique_keys_key ON awa.unique_keys (queue, unique_key, job_id);
CREATE INDEX unique_keys_job_id ON awa.unique_keys (job_id);
SELECT pg_catalog.pg_extension_config_dump('awa.unique_keys', '');
