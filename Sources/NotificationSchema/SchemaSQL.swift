/// SQL the schema's migrations and the store's statements share.
package enum SchemaSQL {
    /// Milliseconds since 1970 to `timestamptz`, NULL staying NULL. Whole seconds and the remaining milliseconds
    /// are added apart: `bigint * interval` goes through float8, which is exact for seconds up to year 9999 but
    /// not for milliseconds.
    package static func timestamp(_ column: String) -> String {
        "timestamptz 'epoch' + (\(column) / 1000) * interval '1 second' + (\(column) % 1000) * interval '1 millisecond'"
    }

    /// The advisory lock key under which a month's partition of `notification_bodies` is created: ASCII `asnb`.
    package static let bodyPartitionLockKey: Int64 = 0x6173_6E62
}
