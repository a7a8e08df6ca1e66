import Foundation

/// Buffered writes to a file handle (standard output), so thousands of result lines cost few system calls.
package final class StreamWriter {
    private let handle: FileHandle
    private var buffer = [UInt8]()

    package init(handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    package func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    package func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
