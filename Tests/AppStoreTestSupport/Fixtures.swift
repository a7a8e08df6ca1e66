import AppStoreModels
import Foundation

/// The shared notification fixtures (`../shared/fixtures` beside the project root, or `ASNP_FIXTURES`).
package enum Fixtures {
    /// The fixtures directory.
    package static let directory: URL = {
        if let path = ProcessInfo.processInfo.environment["ASNP_FIXTURES"] {
            return URL(fileURLWithPath: path)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    /// Apple's real root certificates shipped beside the fixtures.
    package static let appleDirectory = directory.deletingLastPathComponent().appendingPathComponent("apple")

    /// The root of this package.
    package static let packageRoot: URL = {
        // Tests/AppStoreTestSupport/Fixtures.swift -> package root
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// The bytes of a file in the fixtures directory.
    package static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// The cases of a `*-cases.jsonl` file.
    package static func cases(_ name: String) throws -> [FixtureCase] {
        try data(name).split(separator: UInt8(ascii: "\n")).map {
            try JSONDecoder().decode(FixtureCase.self, from: Data($0))
        }
    }

    /// The V2 cases, labelled by Apple's library.
    package static var v2Cases: [FixtureCase] { (try? cases("v2-cases.jsonl")) ?? [] }
    /// The V1 cases.
    package static var v1Cases: [FixtureCase] { (try? cases("v1-cases.jsonl")) ?? [] }

    /// The settings the fixtures were labelled with.
    package static let bundleId = "com.example.notes"
    package static let appAppleId: Int64 = 1_234_567_890
    package static let sharedSecret = "0123456789abcdef0123456789abcdef"
}

/// One labelled body from the fixtures.
package struct FixtureCase: Decodable, Sendable, CustomStringConvertible {
    package var id: String
    /// valid, hostile or malformed.
    package var kind: String
    /// The exact HTTP body.
    package var body: String
    /// `status`, and for valid cases the decoded fields Apple's library reports.
    package var expect: [String: JSONValue]

    package var description: String { id }

    package var expectedStatus: String {
        if case .string(let status) = expect["status"] { return status }
        return "?"
    }
}

extension JSONValue {
    /// A string, or null when absent: how the fixtures write an optional string field.
    package init(_ string: String?) {
        self = string.map(JSONValue.string) ?? .null
    }

    /// An integer, or null when absent: how the fixtures write an optional number field.
    package init(_ integer: Int64?) {
        self = integer.map(JSONValue.integer) ?? .null
    }
}
