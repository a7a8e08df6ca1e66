import AppStoreModels
import AppStoreTestSupport
import AppStoreVerification
import CommandSupport
import Foundation
import PipelineReports
import SwiftASN1
import Testing
import VerificationTestSupport
import X509

@Suite("Batch verification: JSON lines verified in parallel, one report line each, in input order", .tags(.fast))
struct BatchVerificationTests {
    /// The report lines for `input`, read from a file as `asnp verify --jsonl` reads standard input.
    static func run(_ input: String, parallelism: Int, maximumLineLength: Int = 8 << 20) async throws -> (
        lines: [String], allVerified: Bool
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-batch-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("in.jsonl")
        let outputFile = directory.appendingPathComponent("out.jsonl")
        try Data(input.utf8).write(to: inputFile)
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        var lines = LineReader(
            handle: try FileHandle(forReadingFrom: inputFile),
            chunkSize: 1_024,
            maximumLineLength: maximumLineLength
        )
        let output = StreamWriter(handle: try FileHandle(forWritingTo: outputFile))
        let allVerified = await BatchVerification(verifier: try TestVerifiers.fixtures(), parallelism: parallelism)
            .run(lines: &lines, output: output)
        output.flush()
        let text = String(decoding: try Data(contentsOf: outputFile), as: UTF8.self)
        return (text.split(separator: "\n").map(String.init), allVerified)
    }

    static func inputLine(id: Int, body: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["id": id, "body": body]), as: UTF8.self)
    }

    @Test("every fixture, four at a time: each line's id and status in input order, blank lines skipped")
    func inOrder() async throws {
        let cases = Array(Fixtures.v2Cases.prefix(24))
        #expect(cases.count > 4)
        let input = try cases.enumerated().map { try Self.inputLine(id: $0.offset, body: $0.element.body) }
            .joined(separator: "\n\n")
        let (lines, allVerified) = try await Self.run(input, parallelism: 4)
        #expect(lines.count == cases.count)
        for (index, (line, fixture)) in zip(lines, cases).enumerated() {
            #expect(line.hasPrefix(#"{"id":\#(index),"status":"\#(fixture.expectedStatus)""#), "\(fixture)")
        }
        #expect(allVerified == cases.allSatisfy { $0.expectedStatus == "OK" })
    }

    @Test("a line without a body and an overlong line are malformed; the line after them is still verified")
    func malformedLines() async throws {
        let valid = try #require(Fixtures.v2Cases.first { $0.kind == "valid" })
        let input = [
            #"{"id":"a","nobody":1}"#, String(repeating: "x", count: 1 << 17),
            try Self.inputLine(id: 3, body: valid.body),
        ].joined(separator: "\n")
        let (lines, allVerified) = try await Self.run(input, parallelism: 2, maximumLineLength: 1 << 16)
        #expect(!allVerified)
        #expect(
            lines == [
                #"{"id":"a","status":"MALFORMED_BODY","reason":"the input line is not a JSON object with a "#
                    + #"\"body\" string"}"#,
                #"{"status":"MALFORMED_BODY","reason":"the input line is longer than the limit"}"#,
            ] + [lines[2]]
        )
        #expect(lines[2].hasPrefix(#"{"id":3,"status":"OK","version":2,"#))
    }
}
