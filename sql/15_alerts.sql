-- The alert runbook of docs/operations.md ("Alerts and what to do") stays valid: every
-- ```sql block of that section is extracted and run, in a fresh database, where none
-- returns a row; then one condition is made true and its query fires.
\i sql/fresh.inc

SELECT current_database() AS regress_db \gset
CREATE DATABASE awa_test_alerts;
\c awa_test_alerts
CREATE EXTENSION awa_bgw;

-- extract the section's queries into results/ (the count guards the extraction)
\! awk '/^## /{insec = ($0 == "## Alerts and what to do")} insec && /^```sql$/ {inq = 1; next} inq && /^```$/ {inq = 0; print ""; next} insec && inq {print}' "$PG_ABS_SRCDIR/docs/operations.md" > "$PG_ABS_BUILDDIR/results/alerts_runbook.sql"
\! grep -c ';$' "$PG_ABS_BUILDDIR/results/alerts_runbook.sql"
\getenv builddir PG_ABS_BUILDDIR
\set runbook :builddir '/results/alerts_runbook.sql'

-- 1. a healthy fresh install: no query returns a row
\i :runbook

-- 2. a failed job long past the retention (7 days), as if the purge had not run: its
--    alert fires, and only its
INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts, max_attempts,
                             error, created_at, failed_at)
VALUES (1, 'q', 2, 'k', '{}', 3, 3, 'boom', now() - interval '4 hours',
        '2000-01-01 00:00:00+00');
\i :runbook

\c :regress_db
DROP DATABASE awa_test_alerts;
