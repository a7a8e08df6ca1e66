import CommandSupport
import Foundation

/// One measured implementation in a benchmark.
struct BenchmarkRow: Encodable {
    var implementation: String
    var cores: Int
    var notifications: Int
    var seconds: Double

    var perSecond: Double { Double(notifications) / seconds }
}

/// A benchmark's rows with ratios against a reference measured in the same run.
struct BenchmarkReport {
    var title: String
    var rows: [BenchmarkRow]
    var reference: BenchmarkRow

    func print(json: Bool) {
        if json {
            struct Output: Encodable {
                struct Row: Encodable {
                    var implementation: String
                    var cores: Int
                    var notifications: Int
                    var seconds: Double
                    var perSecond: Double
                    var perSecondPerCore: Double
                    var ratioToReference: Double
                }
                var title: String
                var reference: String
                var rows: [Row]
            }
            let output = Output(
                title: title,
                reference: reference.implementation,
                rows: rows.map {
                    .init(
                        implementation: $0.implementation,
                        cores: $0.cores,
                        notifications: $0.notifications,
                        seconds: $0.seconds,
                        perSecond: $0.perSecond,
                        perSecondPerCore: $0.perSecond / Double($0.cores),
                        ratioToReference: $0.perSecond / reference.perSecond
                    )
                }
            )
            TextColumns.printJSON(output)
            return
        }
        Swift.print(title)
        let widths = [28, 7, 17, 10, 0]
        Swift.print(
            TextColumns.line(
                ["implementation", "cores", "notifications/s", "per core", "vs \(reference.implementation)"],
                widths: widths
            )
        )
        for row in rows {
            Swift.print(
                TextColumns.line(
                    [
                        row.implementation, String(row.cores), String(format: "%.0f", row.perSecond),
                        String(format: "%.0f", row.perSecond / Double(row.cores)),
                        Self.ratio(row.perSecond / reference.perSecond),
                    ],
                    widths: widths
                )
            )
        }
    }

    /// Two decimals below 10× (0.46× and 0.62× differ), one above.
    static func ratio(_ value: Double) -> String {
        String(format: value < 10 ? "%.2f×" : "%.1f×", value)
    }
}
