import PostgresRuntime

extension SchemaMigration {
    /// Version 10: the partitions of `notification_bodies` are bounded by UTC months whatever the session's time zone.
    ///
    /// Version 6's `asnp_notification_bodies_partition` computed a month's end as `month_start + interval '1 month'`
    /// on a `timestamptz`, which PostgreSQL does in the session's `TimeZone`. Sessions of this version start in UTC
    /// (``PostgresRuntime/Configuration/startupParameters``), but a store migrated or written by an earlier one
    /// on a server whose zone has daylight-saving time may hold a month that ends an hour early (a gap no partition
    /// holds: an insert there fails) or late (the next month could never be created). The function is replaced by
    /// one that computes both bounds in UTC and refuses a misbounded month by name; each misbounded month is
    /// detached, its rows moved into months bounded right, and dropped (a scan of those months only; a store never
    /// written in such a zone has none).
    static let utcBodyPartitions = SchemaMigration(
        version: 10,
        name: "body partitions bounded by UTC months in any session time zone",
        statements: [
            """
            CREATE OR REPLACE FUNCTION asnp_notification_bodies_partition(at timestamptz) RETURNS text
            LANGUAGE plpgsql AS $$
            DECLARE
                utc_month timestamp := date_trunc('month', at AT TIME ZONE 'UTC');
                month_start timestamptz := utc_month AT TIME ZONE 'UTC';
                month_end timestamptz := (utc_month + interval '1 month') AT TIME ZONE 'UTC';
                partition_name text := 'notification_bodies_' || to_char(utc_month, 'YYYY_MM');
                bounds text[];
            BEGIN
                IF to_regclass(partition_name) IS NULL THEN
                    PERFORM pg_advisory_xact_lock(\(SchemaSQL.bodyPartitionLockKey));
                    BEGIN
                        EXECUTE format(
                            'CREATE TABLE %I PARTITION OF notification_bodies FOR VALUES FROM (%L) TO (%L) '
                                || 'WITH (toast_tuple_target = 128)',
                            partition_name, month_start, month_end
                        );
                    EXCEPTION WHEN duplicate_table THEN
                        -- Created by a writer that held the lock before us: to_regclass did not see it yet.
                        NULL;
                    END;
                ELSE
                    SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), \(Self.partitionBoundsPattern))
                    INTO bounds FROM pg_class c WHERE c.oid = to_regclass(partition_name);
                    IF bounds IS NULL OR bounds[1]::timestamptz <> month_start OR bounds[2]::timestamptz <> month_end
                    THEN
                        RAISE EXCEPTION 'the partition % of notification_bodies is not bounded by its UTC month',
                            partition_name
                            USING HINT = 'run asnp migrate: schema 10 moves a misbounded month''s rows into months '
                                || 'bounded right';
                    END IF;
                END IF;
                RETURN partition_name;
            END
            $$
            """,
            """
            DO $$
            DECLARE
                misbounded record;
                detached text;
                moved text[] := '{}';
            BEGIN
                FOR misbounded IN
                    SELECT name, bounds FROM (
                        SELECT c.relname AS name,
                            regexp_match(pg_get_expr(c.relpartbound, c.oid), \(Self.partitionBoundsPattern)) AS bounds
                        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                        WHERE i.inhparent = 'notification_bodies'::regclass
                    ) partitions
                    WHERE bounds IS NULL
                        OR bounds[1]::timestamptz
                            <> date_trunc('month', bounds[1]::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                        OR bounds[2]::timestamptz
                            <> (date_trunc('month', bounds[1]::timestamptz AT TIME ZONE 'UTC') + interval '1 month')
                                AT TIME ZONE 'UTC'
                LOOP
                    RAISE NOTICE 'moving the rows of % (bounded %) into UTC months', misbounded.name, misbounded.bounds;
                    EXECUTE format('ALTER TABLE notification_bodies DETACH PARTITION %I', misbounded.name);
                    EXECUTE format('ALTER TABLE %I RENAME TO %I', misbounded.name, misbounded.name || '_misbounded');
                    moved := moved || (misbounded.name || '_misbounded');
                END LOOP;
                FOREACH detached IN ARRAY moved LOOP
                    EXECUTE format(
                        'SELECT asnp_notification_bodies_partition(month) FROM '
                            || '(SELECT DISTINCT date_trunc(''month'', received_at AT TIME ZONE ''UTC'') '
                            || 'AT TIME ZONE ''UTC'' AS month FROM %I) months',
                        detached
                    );
                    EXECUTE format('INSERT INTO notification_bodies SELECT * FROM %I', detached);
                    EXECUTE format('DROP TABLE %I', detached);
                END LOOP;
            END
            $$
            """,
        ]
    )

    /// Matches a range partition's bound as `pg_get_expr` prints it, capturing its two `timestamptz` literals. Part of
    /// migration 10's statements: frozen with them.
    private static let partitionBoundsPattern = #"'FROM \(''([^'']+)''\) TO \(''([^'']+)''\)'"#
}
