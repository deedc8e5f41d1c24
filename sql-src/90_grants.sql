-- Privileges: maintenance and internals are revoked from PUBLIC; the status views and
-- the read-only helpers they call stay readable.

REVOKE ALL ON ALL TABLES IN SCHEMA awa FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA awa FROM PUBLIC;

GRANT EXECUTE ON FUNCTION awa.semver_rank(text), awa.ring_authority_min_flip_version()
    TO PUBLIC;
