import Foundation

extension EndToEndStep {
    /// Why a step at `rate` is not run — the backlog it could leave is past `limit` notifications — or nil. The last
    /// step left `backlog` and stored `stored` per second; the backlog grows by what the next step brings that is new
    /// (`newShare` of what is posted: repeats are deduplicated) beyond that.
    package static func backlogRisk(
        backlog: Int,
        stored: Double,
        newShare: Double,
        next rate: Double,
        stepSeconds: Int,
        limit: Int
    ) -> String? {
        let projected = Double(backlog) + max(0, rate * newShare - stored) * Double(stepSeconds)
        guard projected > Double(limit) else { return nil }
        return String(
            format: "a backlog of %d at %.0f stored/s could grow to %.0f, past the %d the mock keeps safely "
                + "(~5 MB per partition; older messages are deleted)",
            backlog,
            stored,
            projected,
            limit
        )
    }

    /// The highest step the pipeline sustained — stored at least 95% of the new notifications it was offered (a
    /// repeated body is deduplicated, not stored), ingress p99 ≤ 50 ms — against the mean of the baselines timed
    /// before the pipeline started and after it stopped (on `cores` cores), and what each process spent per
    /// notification stored at that step, in verifications.
    package static func summary(_ rows: [EndToEndStep], baselines: (before: Double, after: Double), cores: Int)
        -> String
    {
        let verificationRate = (baselines.before + baselines.after) / 2
        let baseline = String(
            format: "baseline (asnp verify --jsonl, all cores, same run): %.0f/s (%.0f/s before the steps, %.0f/s "
                + "after)",
            verificationRate,
            baselines.before,
            baselines.after
        )
        // A baseline taken while something else ran (a neighbour on the host, the system's writeback) makes any
        // ratio to it meaningless: said, not hidden.
        let spread = max(baselines.before, baselines.after) / max(1, min(baselines.before, baselines.after))
        let caution =
            spread > 1.25
            ? String(
                format: "; the baselines differ by %.0f%%: the machine's speed changed during the run, run it again",
                (spread - 1) * 100
            ) : ""
        let sustained = rows.filter { $0.stored >= 0.95 * $0.new && $0.p99 <= 50 }
        guard let best = sustained.max(by: { $0.stored < $1.stored }) else {
            return baseline + "; no step was sustained (stored ≥ 95% of new with p99 ≤ 50 ms)" + caution
        }
        var perNotification = ""
        if let cpu = best.cpuPerNotification(verificationRate: verificationRate, cores: cores) {
            perNotification =
                String(
                    format: "; CPU per notification stored there, in verifications: ingress %.2f, workers %.2f",
                    cpu.ingress,
                    cpu.workers
                ) + (cpu.postgres.map { String(format: ", PostgreSQL %.2f", $0) } ?? "")
        }
        if let bytes = best.rawTopic.bytesPerNotification, let perBatch = best.rawTopic.notificationsPerBatch {
            perNotification += String(
                format: "; the raw topic there: %.0f bytes a notification, %.2f notifications a batch",
                bytes,
                perBatch
            )
        }
        return baseline
            + String(
                format: "; sustained: %.0f/s offered, %.0f/s stored, p99 %.1f ms: %.2f× the baseline",
                best.offered,
                best.stored,
                best.p99,
                best.stored / verificationRate
            ) + perNotification + caution
    }
}
