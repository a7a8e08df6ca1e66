import Foundation

/// The rows of `asnp bench kafka`, each with its ratios to kcat doing the same operation in the same run.
struct KafkaBenchReport {
    var title: String
    var rows: [KafkaBenchRow]

    /// kcat's row for the same operation, if it ran.
    private func reference(for row: KafkaBenchRow) -> KafkaBenchRow? {
        rows.first { $0.operation == row.operation && $0.client.hasPrefix("kcat") }
    }

    func print(json: Bool) {
        if json {
            struct Row: Encodable {
                var operation: String
                var client: String
                var messages: Int
                var seconds: Double
                var cpuSeconds: Double
                var messagesPerSecond: Double
                var messagesPerCPUSecond: Double
                var ratioToKcat: Double?
                var ratioToKcatPerCPUSecond: Double?
            }
            struct Output: Encodable {
                var title: String
                var rows: [Row]
            }
            let output = Output(
                title: title,
                rows: rows.map { row in
                    let reference = reference(for: row)
                    return Row(
                        operation: row.operation,
                        client: row.client,
                        messages: row.messages,
                        seconds: row.seconds,
                        cpuSeconds: row.cpuSeconds,
                        messagesPerSecond: row.perSecond,
                        messagesPerCPUSecond: row.perCPUSecond,
                        ratioToKcat: reference.map { row.perSecond / $0.perSecond },
                        ratioToKcatPerCPUSecond: reference.map { row.perCPUSecond / $0.perCPUSecond }
                    )
                }
            )
            TextColumns.printJSON(output)
            return
        }
        Swift.print(title)
        let header = ["operation", "client", "msgs/s", "CPU s", "msgs/CPU-s", "vs kcat (wall, CPU)"]
        let widths = [24, 19, 11, 8, 13, 0]
        Swift.print(TextColumns.line(header, widths: widths))
        for row in rows {
            let ratios = reference(for: row).map {
                String(format: "%.2f×, %.2f×", row.perSecond / $0.perSecond, row.perCPUSecond / $0.perCPUSecond)
            }
            Swift.print(
                TextColumns.line(
                    [
                        row.operation, row.client, String(format: "%.0f", row.perSecond),
                        String(format: "%.2f", row.cpuSeconds), String(format: "%.0f", row.perCPUSecond),
                        ratios ?? "-",
                    ],
                    widths: widths
                )
            )
        }
    }
}
