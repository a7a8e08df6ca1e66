import Foundation

/// A body from the shared fixtures.
package struct FixtureBody: Sendable {
    package var name: String
    package var bytes: [UInt8]
    /// A V2 body that Apple's library accepts, or one of the scenario's signed bodies.
    package var isValidV2: Bool

    package static func all() throws -> [FixtureBody] {
        struct ScenarioLine: Decodable { var uuid: String, body: String }
        let v2 = try Fixtures.cases("v2-cases.jsonl").map {
            FixtureBody(name: "v2-cases:\($0.id)", bytes: Array($0.body.utf8), isValidV2: $0.kind == "valid")
        }
        let v1 = try Fixtures.cases("v1-cases.jsonl").map {
            FixtureBody(name: "v1-cases:\($0.id)", bytes: Array($0.body.utf8), isValidV2: false)
        }
        let scenario = try Fixtures.data("scenario.jsonl").split(separator: UInt8(ascii: "\n")).map {
            let line = try JSONDecoder().decode(ScenarioLine.self, from: Data($0))
            return FixtureBody(name: "scenario:\(line.uuid)", bytes: Array(line.body.utf8), isValidV2: true)
        }
        let apple = FixtureBody(
            name: "apple-real-test-notification",
            bytes: Array(try Fixtures.data("apple-real-test-notification.json")),
            isValidV2: true
        )
        return v2 + v1 + scenario + [apple]
    }
}
