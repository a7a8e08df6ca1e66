/// One measured client and operation of `asnp-bench kafka`.
struct KafkaBenchRow: Encodable {
    var operation: String
    var client: String
    var messages: Int
    var seconds: Double
    var cpuSeconds: Double
    /// The wall-clock time includes a consumer group's join (kcat -G), so only the CPU figure compares.
    var wallIncludesGroupJoin = false

    var perSecond: Double { Double(messages) / seconds }
    /// Messages per CPU-second of the client process: throughput per core used.
    var perCPUSecond: Double { Double(messages) / max(cpuSeconds, 1e-9) }
}

extension KafkaBenchRow {
    /// One row per operation and client, in first-seen order, with the median wall-clock and CPU time of its
    /// rounds (taken separately).
    static func medians(of rows: [KafkaBenchRow]) -> [KafkaBenchRow] {
        var order: [String] = []
        var rounds: [String: [KafkaBenchRow]] = [:]
        for row in rows {
            let key = "\(row.operation)|\(row.client)"
            if rounds[key] == nil { order.append(key) }
            rounds[key, default: []].append(row)
        }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        return order.map { key in
            let group = rounds[key]!
            var row = group[0]
            row.seconds = median(group.map(\.seconds))
            row.cpuSeconds = median(group.map(\.cpuSeconds))
            return row
        }
    }
}
