-- The read API's role: it may log in and read what `asnp api` reads, nothing else, and every transaction it starts
-- is read-only. Run once per database as an administrator, after `asnp migrate` created the tables:
--   psql "$ADMIN_URL" -v api_password='...' -f Deploy/postgres/api-role.sql
-- then give the same password to PgBouncer's userlist ("asnp_api" "...") and to the Secret's api-database-url.
-- On a streaming replica the role and grants arrive with the primary's WAL: run this on the primary.
-- ReadOnlyRoleTests runs this file against a throwaway server and reads through the API as this role.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'asnp_api') THEN
        CREATE ROLE asnp_api LOGIN;
    END IF;
END
$$;
ALTER ROLE asnp_api PASSWORD :'api_password';
ALTER ROLE asnp_api SET default_transaction_read_only = on;
-- Answers are bounded by the API's own timeout (api.timeoutSeconds, 5 s); the server stops a runaway read too.
ALTER ROLE asnp_api SET statement_timeout = '10s';
GRANT CONNECT ON DATABASE :"DBNAME" TO asnp_api;
GRANT USAGE ON SCHEMA public TO asnp_api;
-- The schema's version (readiness), the subscriptions (state, customers), and the notifications with their
-- decoded JSON through the view that joins their bodies (a view reads its tables with its owner's rights).
GRANT SELECT ON asnp_schema_migrations, subscriptions, notifications_decoded TO asnp_api;
