#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The months `notification_bodies` is partitioned by, as the schema's `asnp_notification_bodies_partition` counts and
/// names them: UTC months of the Gregorian calendar, one partition `notification_bodies_YYYY_MM` each. The store
/// reckons with them in Swift (the months a batch needs, the months retention drops); they live beside the function
/// that makes the partitions.
package enum BodyPartitionMonths {
    /// The Gregorian calendar in UTC, in which months of bodies are counted.
    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The start of the UTC month `monthsBefore` months before the one `date` is in.
    package static func start(of date: Date, monthsBefore: Int) -> Date {
        let components = calendar.dateComponents([.year, .month], from: date)
        let start = calendar.date(from: DateComponents(year: components.year, month: components.month))!
        return calendar.date(byAdding: .month, value: -monthsBefore, to: start)!
    }

    /// The partition of `notification_bodies` holding the UTC month that starts at `monthStart`:
    /// `notification_bodies_YYYY_MM`, as `asnp_notification_bodies_partition` names it.
    package static func partitionName(of monthStart: Date) -> String {
        let components = calendar.dateComponents([.year, .month], from: monthStart)
        let year = String(components.year ?? 0)
        let month = String(components.month ?? 0)
        return "notification_bodies_\(String(repeating: "0", count: max(0, 4 - year.count)) + year)_"
            + (month.count < 2 ? "0" + month : month)
    }
}
