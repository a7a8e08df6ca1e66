/// Left-aligned text columns for the benchmark tables.
enum TextColumns {
    /// The cells padded to their widths (a width of 0 leaves the cell as is), each followed by at least one space.
    static func line(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).map { cell, width in
            cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count)
        }.joined()
    }
}
