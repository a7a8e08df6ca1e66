import Foundation

/// A plain TCP connection to 127.0.0.1 for what an HTTP client will not do: send half a request, trickle a body,
/// send absurd headers. Blocking calls: use it through ``run(_:)``, on a thread of its own.
final class RawConnection: @unchecked Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawConnectionError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw RawConnectionError("connect: \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Sends all of `bytes`; false when the server closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes {
                Foundation.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if result <= 0 { return false }
            sent += result
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until the server closes the connection or `timeout` passes; returns what arrived and whether it closed.
    func readUntilClosed(timeout: Duration) -> (data: String, closed: Bool) {
        Self.readUntilClosed([self], timeout: timeout)[0]
    }

    /// Reads from each of `connections` until the server closed it or `timeout` passes, watching all of them at once
    /// (one after another, a connection the server closed after its own turn would count as open); what arrived on
    /// each and whether it closed.
    static func readUntilClosed(_ connections: [RawConnection], timeout: Duration) -> [(data: String, closed: Bool)] {
        var received = [[UInt8]](repeating: [], count: connections.count)
        var closed = [Bool](repeating: false, count: connections.count)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while closed.contains(false), ContinuousClock.now < deadline {
            let open = closed.indices.filter { !closed[$0] }
            var pollers = open.map { pollfd(fd: connections[$0].descriptor, events: Int16(POLLIN), revents: 0) }
            guard poll(&pollers, nfds_t(pollers.count), 50) > 0 else { continue }
            for (index, poller) in zip(open, pollers) where poller.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(poller.fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { closed[index] = true } else { received[index] += buffer[0..<count] }
            }
        }
        return zip(received, closed).map { (data: String(decoding: $0, as: UTF8.self), closed: $1) }
    }

    /// Waits until the server closed each of `connections` or `timeout` passes, watching all of them at once; whether
    /// each closed.
    static func waitUntilClosed(_ connections: [RawConnection], timeout: Duration) -> [Bool] {
        readUntilClosed(connections, timeout: timeout).map(\.closed)
    }

    /// Runs blocking socket work on a thread of its own.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
