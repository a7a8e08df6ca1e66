import Foundation
import Synchronization

/// A pipe from a child's standard output or error, drained by a thread of its own as the child writes (the child
/// never blocks on a full pipe), into a buffer read from here.
package final class OutputPipe: Sendable {
    private struct State {
        /// Read and not yet returned.
        var unread = Data()
        var ended = false
        /// One read at a time: what it waits for (nil: the end), and the reader.
        var waiter: (marker: Data?, continuation: CheckedContinuation<Data, Never>)?
        var started = false
    }

    private let readEnd: Int32
    /// The child's end; closed here once the child has its copy.
    package let writeEnd: Int32
    private let state = Mutex(State())

    package init() throws {
        (readEnd, writeEnd) = try makePipe(for: "pipe")
    }

    deinit {
        // The reading thread holds this pipe until the end: here it never started.
        if !state.withLock({ $0.started }) {
            close(readEnd)
            close(writeEnd)
        }
    }

    /// Called once the child holds the write end.
    func startReading() {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        precondition(!alreadyStarted, "an OutputPipe serves one child")
        close(writeEnd)
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { readChunk(readEnd, into: $0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                append(buffer[..<count], ended: false)
            }
            close(readEnd)
            append([], ended: true)
        }.start()
    }

    private func append(_ bytes: ArraySlice<UInt8>, ended: Bool) {
        let satisfied = state.withLock { state -> (CheckedContinuation<Data, Never>, Data)? in
            state.unread.append(contentsOf: bytes)
            state.ended = state.ended || ended
            guard let waiter = state.waiter, Self.satisfies(state, waiter.marker) else { return nil }
            state.waiter = nil
            defer { state.unread = Data() }
            return (waiter.continuation, state.unread)
        }
        if let (continuation, data) = satisfied { continuation.resume(returning: data) }
    }

    private static func satisfies(_ state: State, _ marker: Data?) -> Bool {
        if state.ended { return true }
        guard let marker else { return false }
        return state.unread.range(of: marker) != nil
    }

    private func next(until marker: Data?) async -> Data {
        await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            let ready = state.withLock { state -> Data? in
                precondition(state.waiter == nil, "one read at a time")
                if Self.satisfies(state, marker) {
                    defer { state.unread = Data() }
                    return state.unread
                }
                state.waiter = (marker, continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Everything not read yet, once it contains `marker` or the output ended (everyone holding the write end
    /// closed it: the child, and any child of its that inherited it).
    package func read(until marker: String) async -> String {
        String(decoding: await next(until: Data(marker.utf8)), as: UTF8.self)
    }

    /// Everything not read yet, once the output ended.
    package func readToEnd() async -> Data {
        await next(until: nil)
    }
}
