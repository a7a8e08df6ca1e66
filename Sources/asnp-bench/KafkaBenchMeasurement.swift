import Foundation
import LoadGeneration

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time and CPU time (user + system) of this process or of its waited-for children, over one
/// measured operation.
struct KafkaBenchMeasurement {
    private let started = ContinuousClock.now
    private let ownCPU = Self.cpuSeconds(children: false)
    private let childrenCPU = Self.cpuSeconds(children: true)

    static func start() -> KafkaBenchMeasurement { KafkaBenchMeasurement() }

    /// The row for `messages` handled since `start()`; `child` counts the CPU of children that exited meanwhile (a
    /// kcat run) instead of this process's.
    func finish(operation: String, client: String, messages: Int, child: Bool = false) -> KafkaBenchRow {
        let elapsed = ContinuousClock.now - started
        let cpu = child ? Self.cpuSeconds(children: true) - childrenCPU : Self.cpuSeconds(children: false) - ownCPU
        return KafkaBenchRow(
            operation: operation,
            client: client,
            messages: messages,
            seconds: elapsed.seconds,
            cpuSeconds: cpu
        )
    }

    private static func cpuSeconds(children: Bool) -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(children ? __rusage_who_t(RUSAGE_CHILDREN.rawValue) : __rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
