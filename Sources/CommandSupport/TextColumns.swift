import Foundation

/// Output helpers for the benchmark reports: left-aligned text columns, or one JSON object.
package enum TextColumns {
    /// The cells padded to their widths (a width of 0 leaves the cell as is), each followed by at least one space.
    package static func line(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).map { cell, width in
            cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count)
        }.joined()
    }

    /// Prints `value` as one line of JSON with sorted keys, for scripts.
    package static func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self))
    }
}
