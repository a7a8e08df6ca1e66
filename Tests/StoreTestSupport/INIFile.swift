import Foundation

/// An INI file kept as its lines, so that a test changes a few values and leaves every other line (and comment) as
/// the file has it.
package struct INIFile: Sendable {
    private var lines: [String]

    package init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    package init(contentsOfFile path: String) throws {
        self.init(try String(contentsOfFile: path, encoding: .utf8))
    }

    package var text: String { lines.joined(separator: "\n") }

    /// The value of `key` in `section`, if set.
    package func value(_ section: String, _ key: String) -> String? {
        index(section, key).map { Self.split(lines[$0])!.value }
    }

    /// Replaces the value of `key` in `section`; throws when the file does not set it, so that a test changing a
    /// line the file no longer has fails instead of testing something else.
    package mutating func replace(_ section: String, _ key: String, _ value: String) throws {
        guard let index = index(section, key) else {
            throw MissingKey(description: "the configuration sets no \(key) in [\(section)]")
        }
        lines[index] = "\(key) = \(value)"
    }

    /// Sets `key` in `section`, adding the line at the section's end when it is missing.
    package mutating func set(_ section: String, _ key: String, _ value: String) {
        if let index = index(section, key) {
            lines[index] = "\(key) = \(value)"
            return
        }
        let header = lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "[\(section)]" }
        guard let header else {
            lines += ["[\(section)]", "\(key) = \(value)"]
            return
        }
        let next = lines[(header + 1)...].firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") }
        lines.insert("\(key) = \(value)", at: next ?? lines.endIndex)
    }

    /// A key a test meant to change is not in the file.
    package struct MissingKey: Error, CustomStringConvertible {
        package let description: String
    }

    private func index(_ section: String, _ key: String) -> Int? {
        var current = ""
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                current = String(trimmed.dropFirst().prefix { $0 != "]" })
            } else if current == section, Self.split(line)?.key == key {
                return index
            }
        }
        return nil
    }

    /// `key = value`; nil for comments, blank lines and section headers.
    private static func split(_ line: String) -> (key: String, value: String)? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.hasPrefix(";"), !trimmed.hasPrefix("#"), !trimmed.hasPrefix("["),
            let equals = trimmed.firstIndex(of: "=")
        else { return nil }
        return (
            trimmed[..<equals].trimmingCharacters(in: .whitespaces),
            trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        )
    }
}
