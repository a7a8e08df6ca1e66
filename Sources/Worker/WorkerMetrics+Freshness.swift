import AppStoreModels
import NotificationStore
import PipelineContract
import Prometheus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How fresh the worker's outputs are, stage by stage (Docs/worker.md, "Freshness"): Apple's `signedDate` to the
/// receipt, the receipt to the commit that stored the notification, the commit to the broker's acknowledgement of the
/// event. Each is a histogram per app and environment; the two first also per source (`ingress`, `history`,
/// `replay`: a notification the reconciler found days later is not late to the ingress). The SLOs are read from them
/// (Deploy/prometheus/alerts.rules.yml).
///
/// The stages compare clocks of different machines (Apple's, the ingress's, the worker's, the database's for a row
/// read back): a negative difference, a skew, counts as 0.
extension WorkerMetrics {
    /// A stage of a notification's way, measured by a histogram of its own.
    enum FreshnessStage: String, CaseIterable, Sendable {
        case signedToReceived = "signed_to_received"
        case receivedToStored = "received_to_stored"
        case storedToPublished = "stored_to_published"

        var help: String {
            switch self {
            case .signedToReceived: "From Apple's signedDate to the receipt of the notification, when new."
            case .receivedToStored: "From the receipt of a notification to the commit that stored it, when new."
            case .storedToPublished:
                "From the commit that stored an outbox row to the broker's acknowledgement of its event."
            }
        }

        /// Its labels: app and environment, and for the receipt's stages the source.
        var labelNames: [String] {
            self == .storedToPublished ? ["app", "environment"] : ["app", "environment", "source"]
        }
    }

    /// The buckets, in seconds: the SLOs' bounds (60 s, 120 s) are among them, and Apple's delivery delays reach
    /// days (it retries for about 6.5).
    static let freshnessBuckets: [Duration] = [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600, 21_600, 86_400,
    ].map { .seconds($0) }

    /// Records the freshness of the notifications a transaction stored for the first time, committed at `storedAt`.
    func recordStored(_ batch: NotificationBatch, newlyStored: [UUID], storedAt: Date) {
        guard !newlyStored.isEmpty else { return }
        var remaining = Set(newlyStored)
        for entry in batch.entries {
            // The first of in-batch duplicates is the one stored.
            guard case .verified(let notification) = entry.verdict, let uuid = entry.notificationUUID,
                remaining.remove(uuid) != nil
            else { continue }
            let labels = [
                ("app", entry.raw.headers[RawNotificationHeaders.Name.app] ?? "unknown"),
                ("environment", entry.raw.headers[RawNotificationHeaders.Name.environment] ?? "unknown"),
                ("source", entry.raw.headers[RawNotificationHeaders.Name.source] ?? "unknown"),
            ]
            // V1 has no signedDate.
            if case .v2(let v2) = notification, let signedDate = v2.payload.signedDate {
                let signed = Date(timeIntervalSince1970: Double(signedDate) / 1_000)
                freshness(.signedToReceived, labels).record(Self.elapsed(from: signed, to: entry.raw.receivedAt))
            }
            freshness(.receivedToStored, labels).record(Self.elapsed(from: entry.raw.receivedAt, to: storedAt))
        }
    }

    /// Records the freshness of an event the broker acknowledged at `publishedAt`.
    func recordPublished(_ row: OutboxMessage, app: String, environment: String, publishedAt: Date) {
        freshness(.storedToPublished, [("app", app), ("environment", environment)])
            .record(Self.elapsed(from: row.storedAt, to: publishedAt))
    }

    /// The histogram of `stage` for `labels` (``FreshnessStage/labelNames``, in order).
    func freshness(_ stage: FreshnessStage, _ labels: [(String, String)]) -> DurationHistogram {
        registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "asnp",
                subsystem: "worker",
                metricName: stage.rawValue,
                unitName: "seconds",
                helpText: stage.help
            ),
            labels: labels,
            buckets: Self.freshnessBuckets
        )
    }

    private static func elapsed(from start: Date, to end: Date) -> Duration {
        .seconds(max(0, end.timeIntervalSince(start)))
    }
}
