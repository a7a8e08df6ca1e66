import PostgresRuntime

extension SchemaMigration {
    /// Version 6: the cold part of a notification, its raw body and decoded JSON, leaves `notifications` for
    /// `notification_bodies`, partitioned by UTC month of receipt so that retention drops whole months; the facts
    /// stay in `notifications` for good. Bodies are packed (``PackedBody``: each JWS header once, in `jws_headers`,
    /// referred to by its SHA-256); rejected bodies are packed in place (`rejected_notifications.body`). The view
    /// `notifications_decoded` gives the facts with their decoded JSON, as `notifications` had them.
    ///
    /// Only metadata changes here, so the migration takes its locks for moments: rows stored by earlier versions
    /// keep their body and JSON in `notifications` (renamed `legacy_raw_body`, `legacy_decoded`: an earlier version's
    /// worker still running must fail on them, not read NULL and drop an event) until
    /// ``NotificationStore/moveBodies(batchSize:progress:)`` moves them in short batches while workers write, and every
    /// read takes them from there while they are set. `rejected_notifications.raw_body` becomes `legacy_raw_body` alike.
    /// The rejected table's check is `NOT VALID` for the same reason: every existing row holds it (`raw_body`, no
    /// `body`), and validating would scan the table under an exclusive lock.
    ///
    /// A body row is about 1.5 KB packed and 1.3 KB of JSON, under the 2 KB from which PostgreSQL compresses a row:
    /// `toast_tuple_target = 128` on each partition and `STORAGE MAIN` make it compress both values (lz4) and keep
    /// them in the row.
    static let bodyStore = SchemaMigration(
        version: 6,
        name: "raw bodies and decoded JSON packed, in monthly partitions",
        statements: [
            """
            CREATE TABLE jws_headers (
                digest    bytea       PRIMARY KEY CHECK (length(digest) = 32),
                header    text        NOT NULL,
                stored_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE notification_bodies (
                notification_uuid uuid        NOT NULL,
                received_at       timestamptz NOT NULL,
                body              bytea       COMPRESSION lz4 NOT NULL,
                decoded           jsonb       COMPRESSION lz4 NOT NULL,
                PRIMARY KEY (notification_uuid, received_at)
            ) PARTITION BY RANGE (received_at)
            """,
            "ALTER TABLE notification_bodies ALTER COLUMN body SET STORAGE MAIN, ALTER COLUMN decoded SET STORAGE MAIN",
            // Creates the partition of `notification_bodies` for the UTC month of `at` unless it exists, and returns
            // its name. Writers call it for the months of every batch and the month after: DDL runs only when a
            // month is new, under a lock so that writers starting a month together do not race.
            """
            CREATE FUNCTION asnp_notification_bodies_partition(at timestamptz) RETURNS text
            LANGUAGE plpgsql AS $$
            DECLARE
                month_start timestamptz := date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
                partition_name text := 'notification_bodies_' || to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
            BEGIN
                IF to_regclass(partition_name) IS NULL THEN
                    PERFORM pg_advisory_xact_lock(\(SchemaSQL.bodyPartitionLockKey));
                    BEGIN
                        EXECUTE format(
                            'CREATE TABLE %I PARTITION OF notification_bodies FOR VALUES FROM (%L) TO (%L) '
                                || 'WITH (toast_tuple_target = 128)',
                            partition_name, month_start, month_start + interval '1 month'
                        );
                    EXCEPTION WHEN duplicate_table THEN
                        -- Created by a writer that held the lock before us: to_regclass did not see it yet.
                        NULL;
                    END;
                END IF;
                RETURN partition_name;
            END
            $$
            """,
            // The SQL twin of PackedBody.unpack, for audits and checks with SQL alone:
            // `asnp_raw_body(body)` is the body as received. PackedBodySQLTests holds the two equal.
            """
            CREATE FUNCTION asnp_packed_varint(stored bytea, INOUT at integer, OUT value bigint)
            LANGUAGE plpgsql IMMUTABLE STRICT AS $$
            DECLARE
                shift integer := 0;
                byte integer;
            BEGIN
                value := 0;
                LOOP
                    byte := get_byte(stored, at);
                    at := at + 1;
                    value := value | ((byte & 127)::bigint << shift);
                    EXIT WHEN byte < 128;
                    shift := shift + 7;
                    IF shift > 56 THEN
                        RAISE EXCEPTION 'a packed body has a length of more than 8 bytes at byte %', at;
                    END IF;
                END LOOP;
            END
            $$
            """,
            """
            CREATE FUNCTION asnp_packed_bytes(stored bytea, INOUT at integer, OUT value bytea)
            LANGUAGE plpgsql IMMUTABLE STRICT AS $$
            DECLARE
                length bigint;
            BEGIN
                SELECT v.at, v.value INTO at, length FROM asnp_packed_varint(stored, at) v;
                IF at + length > octet_length(stored) THEN
                    RAISE EXCEPTION 'a packed body ends within a string of % bytes at byte %', length, at;
                END IF;
                value := substring(stored FROM at + 1 FOR length::integer);
                at := at + length::integer;
            END
            $$
            """,
            """
            CREATE FUNCTION asnp_jws_header(stored bytea, at integer) RETURNS bytea
            LANGUAGE plpgsql STABLE STRICT AS $$
            DECLARE
                text_bytes bytea;
            BEGIN
                SELECT convert_to(header, 'UTF8') INTO text_bytes FROM jws_headers
                WHERE digest = substring(stored FROM at + 1 FOR 32);
                IF text_bytes IS NULL THEN
                    RAISE EXCEPTION 'no JWS header with digest %', encode(substring(stored FROM at + 1 FOR 32), 'hex');
                ELSIF sha256(text_bytes) <> substring(stored FROM at + 1 FOR 32) THEN
                    RAISE EXCEPTION 'the JWS header stored for digest % has another digest',
                        encode(substring(stored FROM at + 1 FOR 32), 'hex');
                END IF;
                RETURN text_bytes;
            END
            $$
            """,
            """
            CREATE FUNCTION asnp_base64url(data bytea) RETURNS bytea
            LANGUAGE sql IMMUTABLE STRICT
            RETURN convert_to(rtrim(translate(encode(data, 'base64'), E'+/\\n', '-_'), '='), 'UTF8')
            """,
            """
            CREATE FUNCTION asnp_raw_body(stored bytea) RETURNS bytea
            LANGUAGE plpgsql STABLE STRICT AS $$
            DECLARE
                format integer := get_byte(stored, 0);
                at integer := 1;
                pieces bigint;
                prefix bytea;
                outer_header bytea;
                payload bytea := '';
                part bytea;
                signature bytea;
            BEGIN
                IF format = 0 THEN
                    RETURN substring(stored FROM 2);
                ELSIF format NOT IN (1, 2) THEN
                    RAISE EXCEPTION 'packed body format % is not one this schema reads', format;
                END IF;
                SELECT v.at, v.value INTO at, prefix FROM asnp_packed_bytes(stored, at) v;
                outer_header := asnp_jws_header(stored, at);
                at := at + 32;
                SELECT v.at, v.value INTO at, pieces FROM asnp_packed_varint(stored, at) v;
                FOR piece IN 1..pieces LOOP
                    SELECT v.at, v.value INTO at, part FROM asnp_packed_bytes(stored, at) v;
                    payload := payload || part || asnp_jws_header(stored, at);
                    at := at + 32;
                    IF format = 2 THEN
                        SELECT v.at, v.value INTO at, part FROM asnp_packed_bytes(stored, at) v;
                        payload := payload || '\\x2e'::bytea || asnp_base64url(part);
                        SELECT v.at, v.value INTO at, part FROM asnp_packed_bytes(stored, at) v;
                        payload := payload || '\\x2e'::bytea || asnp_base64url(part);
                    END IF;
                END LOOP;
                SELECT v.at, v.value INTO at, part FROM asnp_packed_bytes(stored, at) v;
                payload := payload || part;
                SELECT v.at, v.value INTO at, signature FROM asnp_packed_bytes(stored, at) v;
                IF format = 2 THEN
                    signature := asnp_base64url(signature);
                END IF;
                SELECT v.at, v.value INTO at, part FROM asnp_packed_bytes(stored, at) v;
                IF at <> octet_length(stored) THEN
                    RAISE EXCEPTION 'a packed body has % bytes after its end', octet_length(stored) - at;
                END IF;
                RETURN prefix || outer_header || '\\x2e'::bytea || asnp_base64url(payload) || '\\x2e'::bytea
                    || signature || part;
            END
            $$
            """,
            "SELECT asnp_notification_bodies_partition(now())",
            "SELECT asnp_notification_bodies_partition(now() + interval '1 month')",
            "ALTER TABLE notifications ALTER COLUMN raw_body DROP NOT NULL, ALTER COLUMN decoded DROP NOT NULL",
            // Renamed, so that a worker of an earlier version still running in a rolling update fails on them
            // (and retries, storing nothing) instead of reading NULL where it expects a body and dropping the event.
            "ALTER TABLE notifications RENAME COLUMN raw_body TO legacy_raw_body",
            "ALTER TABLE notifications RENAME COLUMN decoded TO legacy_decoded",
            """
            CREATE VIEW notifications_decoded AS
            SELECT n.notification_uuid, n.version, n.notification_type, n.subtype, n.environment, n.bundle_id,
                n.app_apple_id, n.original_transaction_id, n.transaction_id, n.product_id, n.signed_date,
                n.expires_date, n.revocation_date, n.auto_renew_status, COALESCE(b.decoded, n.legacy_decoded) AS decoded,
                n.received_at, n.stored_at, n.kafka_topic, n.kafka_partition, n.kafka_offset
            FROM notifications n
            LEFT JOIN notification_bodies b
                ON b.notification_uuid = n.notification_uuid AND b.received_at = n.received_at
            """,
            """
            ALTER TABLE rejected_notifications
                ADD COLUMN body bytea COMPRESSION lz4,
                ALTER COLUMN raw_body DROP NOT NULL
            """,
            "ALTER TABLE rejected_notifications RENAME COLUMN raw_body TO legacy_raw_body",
            """
            ALTER TABLE rejected_notifications ADD CONSTRAINT rejected_notifications_body_check
                CHECK (num_nonnulls(body, legacy_raw_body) = 1) NOT VALID
            """,
        ]
    )
}
