import AppStoreModels
import Foundation

/// The shared notification fixtures (`../shared/fixtures` beside the project root, or `ASNP_FIXTURES`).
public enum Fixtures {
    /// The fixtures directory.
    public static let directory: URL = {
        if let path = ProcessInfo.processInfo.environment["ASNP_FIXTURES"] {
            return URL(fileURLWithPath: path)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    /// Apple's real root certificates shipped beside the fixtures.
    public static let appleDirectory = directory.deletingLastPathComponent().appendingPathComponent("apple")

    /// The root of this package.
    public static let packageRoot: URL = {
        // Tests/AppStoreTestSupport/Fixtures.swift -> package root
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// The bytes of a file in the fixtures directory.
    public static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// The cases of a `*-cases.jsonl` file.
    public static func cases(_ name: String) throws -> [FixtureCase] {
        try data(name).split(separator: UInt8(ascii: "\n")).map {
            try JSONDecoder().decode(FixtureCase.self, from: Data($0))
        }
    }

    /// The V2 cases, labelled by Apple's library.
    public static var v2Cases: [FixtureCase] { (try? cases("v2-cases.jsonl")) ?? [] }
    /// The V1 cases.
    public static var v1Cases: [FixtureCase] { (try? cases("v1-cases.jsonl")) ?? [] }

    /// The settings the fixtures were labelled with.
    public static let bundleId = "com.example.notes"
    public static let appAppleId: Int64 = 1_234_567_890
    public static let sharedSecret = "0123456789abcdef0123456789abcdef"
}

/// One labelled body from the fixtures.
public struct FixtureCase: Decodable, Sendable, CustomStringConvertible {
    public var id: String
    /// valid, hostile or malformed.
    public var kind: String
    /// The exact HTTP body.
    public var body: String
    /// `status`, and for valid cases the decoded fields Apple's library reports.
    public var expect: [String: JSONValue]

    public var description: String { id }

    public var expectedStatus: String {
        if case .string(let status) = expect["status"] { return status }
        return "?"
    }
}

extension JSONValue {
    /// A string, or null when absent: how the fixtures write an optional string field.
    public init(_ string: String?) {
        self = string.map(JSONValue.string) ?? .null
    }

    /// An integer, or null when absent: how the fixtures write an optional number field.
    public init(_ integer: Int64?) {
        self = integer.map(JSONValue.integer) ?? .null
    }
}
