-- The extension installs into schema awa (the control file fixes it; not relocatable).
CREATE EXTENSION awa_bgw;
SELECT extname, extversion, nspname
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'awa_bgw';
-- creating it twice is refused
CREATE EXTENSION awa_bgw;
