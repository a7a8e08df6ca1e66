import AppStoreTestSupport
import Foundation
import StoreTestSupport
import Testing

@Suite("The local PostgreSQL server of asnp dev and the tests", .tags(.store))
struct LocalPostgresServerTests {
    /// A CI run hung on this: a server started during the tests held other tests' output pipes, so their readers
    /// never saw the end of the output.
    @Test("a server started while the process holds a pipe does not inherit it")
    func inheritsNoDescriptor() async throws {
        let pipe = Pipe()
        let server = try await TestPostgresServer.start()
        let pidFile = try String(contentsOfFile: server.directory + "/data/postmaster.pid", encoding: .utf8)
        let postmaster = try #require(pidFile.split(separator: "\n").first.flatMap { Int32($0) })
        let ours = try FileManager.default.destinationOfSymbolicLink(
            atPath: "/proc/self/fd/\(pipe.fileHandleForWriting.fileDescriptor)"
        )
        let theirs = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(postmaster)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(postmaster)/fd/\($0)")
        }
        #expect(ours.hasPrefix("pipe:"))
        #expect(!theirs.isEmpty)
        #expect(!theirs.contains(ours))
        try await server.stop()
    }
}
