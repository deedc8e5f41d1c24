-- GUCs: names, defaults with units, bounds, contexts, the reserved prefix.
\i sql/fresh.inc
SELECT name, setting, unit, context, min_val, max_val, boot_val
  FROM pg_settings WHERE name LIKE 'awa\_bgw.%' ORDER BY name;
SHOW awa_bgw.fold_interval;
SHOW awa_bgw.auto_flip_stable_period;
SHOW awa_bgw.failed_retention;

-- superuser-settable in a session (the SQL functions read them)
SET awa_bgw.prune_lock_timeout = '25ms';
SHOW awa_bgw.prune_lock_timeout;
SET awa_bgw.prune_lock_timeout = '2s';
SHOW awa_bgw.prune_lock_timeout;
SET awa_bgw.prune_lock_timeout = 0;
SET awa_bgw.prune_lock_timeout = '2h';
RESET awa_bgw.prune_lock_timeout;
SET awa_bgw.horizon_pin_min_age = '1s';
SET awa_bgw.horizon_pin_min_age = '-1s';
RESET awa_bgw.horizon_pin_min_age;

-- reload-only GUCs cannot be SET in a session
SET awa_bgw.queue_rotate_interval = '500ms';
SET awa_bgw.enabled = off;
-- postmaster-only
SET awa_bgw.role = 'someone';

-- bad values are rejected when written, before any reload could reach the worker
ALTER SYSTEM SET awa_bgw.queue_rotate_interval = '50ms';
ALTER SYSTEM SET awa_bgw.lease_rotate_interval = 'often';
ALTER SYSTEM SET awa_bgw.fold_interval = '-1';
ALTER SYSTEM SET awa_bgw.auto_flip_stable_period = '0';
ALTER SYSTEM SET awa_bgw.enabled = 'maybe';
ALTER SYSTEM SET awa_bgw.databases = 'a,,b';
ALTER SYSTEM SET awa_bgw.claim_rotate_interval = '2min';
ALTER SYSTEM RESET awa_bgw.claim_rotate_interval;

-- the prefix is reserved: a typo is an error, not a silent placeholder
SET awa_bgw.queue_rotate_intervall = '1s';
SELECT current_setting('awa_bgw.nosuch', true) AS missing_ok;
