import CommandSupport
import Foundation

/// The rows of `asnp-bench kafka`, each with its ratios to kcat doing the same operation in the same run.
///
/// kcat's consumer-group run includes the group join in its wall-clock time (ours starts the clock at the first
/// batch), so for that operation only the CPU ratio is printed.
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
                        ratioToKcat: reference.flatMap {
                            $0.wallIncludesGroupJoin ? nil : row.perSecond / $0.perSecond
                        },
                        ratioToKcatPerCPUSecond: reference.map { row.perCPUSecond / $0.perCPUSecond }
                    )
                }
            )
            TextColumns.printJSON(output)
            return
        }
        Swift.print(title)
        let header = ["operation", "client", "msgs/s", "CPU s", "msgs/CPU-s", "vs kcat (wall, CPU)"]
        let widths = [30, 19, 11, 8, 13, 0]
        Swift.print(TextColumns.line(header, widths: widths))
        for row in rows {
            // A wall-clock ratio against a run that includes a group join would mislead; the CPU ratio still holds.
            let ratios = reference(for: row).map {
                ($0.wallIncludesGroupJoin ? "-" : String(format: "%.2f×", row.perSecond / $0.perSecond))
                    + String(format: ", %.2f×", row.perCPUSecond / $0.perCPUSecond)
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
