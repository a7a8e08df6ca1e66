import Foundation

/// Buffered writes to a file handle (standard output), so thousands of result lines cost few system calls.
final class StreamWriter {
    private let handle: FileHandle
    private var buffer = [UInt8]()

    init(handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
