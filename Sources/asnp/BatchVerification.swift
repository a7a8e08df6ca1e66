import AppStoreVerification
import Foundation

/// The id an input line of `asnp verify --jsonl` carries, echoed back as it came.
enum BatchInputID: Decodable {
    case string(String)
    case int(Int64)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let int = try? container.decode(Int64.self) {
            self = .int(int)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    var json: OrderedJSONObject.Value {
        switch self {
        case .string(let string): .string(string)
        case .int(let int): .int(int)
        }
    }
}

/// Verifies JSON lines on all cores and prints the results in input order.
struct BatchVerification {
    private struct InputLine: Decodable {
        var id: BatchInputID?
        var body: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Lenient, so a line with a bad body still gets its id echoed.
            id = try? container.decodeIfPresent(BatchInputID.self, forKey: .id)
            body = try? container.decodeIfPresent(String.self, forKey: .body)
        }

        private enum CodingKeys: String, CodingKey {
            case id, body
        }
    }

    let verifier: NotificationVerifier
    /// How many bodies are verified at once.
    let parallelism: Int

    /// Verifies every line `lines` yields, at most ``parallelism`` at once; returns whether every line verified.
    func run(lines: inout LineReader, output: StreamWriter) async -> Bool {
        var allVerified = true
        await withTaskGroup(of: (Int, VerificationReport).self) { group in
            // Results that finished before an earlier line did, held until it is their turn to print.
            var pending: [Int: VerificationReport] = [:]
            var nextToPrint = 0
            var nextToStart = 0
            func startNext() {
                guard let line = lines.nextLine() else { return }
                let index = nextToStart
                nextToStart += 1
                let bytes = Data(line)
                group.addTask {
                    (index, await verify(line: bytes))
                }
            }
            for _ in 0..<parallelism { startNext() }
            while let (index, report) = await group.next() {
                pending[index] = report
                while let ready = pending.removeValue(forKey: nextToPrint) {
                    if ready.result.status != "OK" { allVerified = false }
                    output.write(ready.jsonLine + "\n")
                    nextToPrint += 1
                }
                startNext()
            }
        }
        return allVerified
    }

    private func verify(line: Data) async -> VerificationReport {
        let input = try? JSONDecoder().decode(InputLine.self, from: line)
        guard let input, let body = input.body else {
            return VerificationReport(
                id: input?.id,
                result: .rejected(
                    VerificationError(
                        code: .malformedBody,
                        reason: "the input line is not a JSON object with a \"body\" string"
                    )
                )
            )
        }
        return VerificationReport(id: input.id, result: await verifier.verify(body: Data(body.utf8)))
    }
}
