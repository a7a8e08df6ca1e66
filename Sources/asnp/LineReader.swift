import Foundation

/// Reads a file handle line by line in large chunks, so a batch of any size is verified in bounded memory.
struct LineReader {
    private let handle: FileHandle
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    private var reachedEnd = false

    init(handle: FileHandle, chunkSize: Int = 1 << 20) {
        self.handle = handle
        self.chunkSize = chunkSize
    }

    /// The next line that is not blank, without its line break; nil at the end of input.
    mutating func nextLine() -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if !Self.isBlank(line) { return line }
                continue
            }
            if reachedEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return Self.isBlank(line) ? nil : line
            }
            // Keep only the unread tail, then read more.
            buffer.removeFirst(start)
            start = 0
            let chunk = handle.readData(ofLength: chunkSize)
            if chunk.isEmpty {
                reachedEnd = true
            } else {
                buffer.append(contentsOf: chunk)
            }
        }
    }

    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }
    }
}
