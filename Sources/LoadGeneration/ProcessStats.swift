import Foundation

/// What /proc says about other processes: for benchmarks that measure child processes and the database server.
package enum ProcessStats {
    /// VmRSS of a process.
    package static func residentBytes(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1_024
    }

    /// User + system CPU seconds of a process (all its threads).
    package static func cpuSeconds(of pid: Int32) -> Double {
        guard let fields = statFields(of: "/proc/\(pid)/stat") else { return 0 }
        return seconds(fields, including: .own)
    }

    /// The postmaster of the PostgreSQL server one of whose backends is `backend`; nil when the server is not on
    /// this machine.
    package static func postmaster(ofBackend backend: Int32) -> Int32? {
        guard isPostgres(backend), let fields = statFields(of: "/proc/\(backend)/stat"),
            let parent = Int32(fields[1]), isPostgres(parent)
        else { return nil }
        return parent
    }

    /// CPU seconds of a PostgreSQL server's process tree: the postmaster, its live children, and (through the
    /// postmaster's waited-for children time) the backends that already ended.
    package static func postgresCPUSeconds(postmaster: Int32) -> Double? {
        guard let postmasterFields = statFields(of: "/proc/\(postmaster)/stat") else { return nil }
        var total = seconds(postmasterFields, including: .ownAndWaitedForChildren)
        let children =
            (try? String(contentsOfFile: "/proc/\(postmaster)/task/\(postmaster)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ") {
            if let fields = statFields(of: "/proc/\(child)/stat") {
                total += seconds(fields, including: .ownAndWaitedForChildren)
            }
        }
        return total
    }

    /// A process id of a remote server may name an unrelated process here.
    private static func isPostgres(_ pid: Int32) -> Bool {
        let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        return name?.hasPrefix("postgres") == true
    }

    private enum Accounting {
        case own
        case ownAndWaitedForChildren
    }

    private static let clockTicksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// The fields of a stat file after the command name, which may hold spaces: the first is the state (field 3).
    private static func statFields(of path: String) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let afterName = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        return fields.count > 14 ? fields : nil
    }

    private static func seconds(_ fields: [Substring], including accounting: Accounting) -> Double {
        // utime, stime, cutime, cstime are fields 14–17.
        let indices = accounting == .own ? 11...12 : 11...14
        return indices.compactMap { Double(fields[$0]) }.reduce(0, +) / clockTicksPerSecond
    }
}
