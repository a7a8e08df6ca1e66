import Foundation

/// Reads a file handle line by line in large chunks, so a batch of any size is verified in bounded memory.
///
/// The reads block: fine for a one-shot command reading its standard input, and `beforeRead` lets the caller
/// flush its output first, so results of a slow producer's lines are not held back.
package struct LineReader {
    /// One line of input.
    package enum Line {
        case line(ArraySlice<UInt8>)
        /// A line longer than the limit; its bytes were discarded.
        case tooLong
    }

    private let handle: FileHandle
    private let chunkSize: Int
    private let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    private var reachedEnd = false
    /// Whether the rest of an overlong line is being skipped.
    private var discarding = false

    /// - Parameter maximumLineLength: longer lines are reported as ``Line/tooLong`` instead of being buffered.
    package init(handle: FileHandle, chunkSize: Int = 1 << 20, maximumLineLength: Int = 8 << 20) {
        self.handle = handle
        self.chunkSize = chunkSize
        self.maximumLineLength = maximumLineLength
    }

    /// The next line that is not blank, without its line break; nil at the end of input.
    package mutating func nextLine(beforeRead: () -> Void = {}) -> Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if discarding {
                    discarding = false
                    return .tooLong
                }
                if !Self.isBlank(line) { return .line(line) }
                continue
            }
            if buffer.count - start > maximumLineLength {
                discarding = true
                start = buffer.count
            }
            if reachedEnd {
                if discarding {
                    discarding = false
                    return .tooLong
                }
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return Self.isBlank(line) ? nil : .line(line)
            }
            // Keep only the unread tail, then read more.
            buffer.removeFirst(start)
            start = 0
            beforeRead()
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
