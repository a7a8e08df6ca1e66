import Foundation

/// Free TCP ports on 127.0.0.1 for servers a test starts as child processes.
package enum LoopbackPort {
    /// A port that was free a moment ago (bound to port 0, then released).
    package static func free() throws -> Int {
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw LoopbackPortError() }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// No port could be bound on 127.0.0.1.
package struct LoopbackPortError: Error, CustomStringConvertible {
    package var description: String { "no free port on 127.0.0.1" }
}
