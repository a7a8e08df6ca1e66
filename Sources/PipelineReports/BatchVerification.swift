import AppStoreVerification
import CommandSupport
import Foundation

/// The id an input line of `asnp verify --jsonl` carries, echoed back as the same JSON value.
package struct BatchInputID: Sendable {
    /// The id as JSON text.
    package let json: String

    package init?(_ value: Any) {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) else {
            return nil
        }
        json = String(decoding: data, as: UTF8.self)
    }
}

/// Verifies JSON lines on all cores and prints the results in input order.
package struct BatchVerification {
    package let verifier: NotificationVerifier
    /// How many bodies are verified at once.
    package let parallelism: Int

    package init(verifier: NotificationVerifier, parallelism: Int) {
        self.verifier = verifier
        self.parallelism = parallelism
    }

    /// Verifies every line `lines` yields, at most ``parallelism`` at once; returns whether every line verified.
    package func run(lines: inout LineReader, output: StreamWriter) async -> Bool {
        var allVerified = true
        await withTaskGroup(of: (Int, VerificationReport).self) { group in
            // Results that finished before an earlier line did, held until it is their turn to print.
            var pending: [Int: VerificationReport] = [:]
            var nextToPrint = 0
            var nextToStart = 0
            func startNext() {
                guard let line = lines.nextLine(beforeRead: output.flush) else { return }
                let index = nextToStart
                nextToStart += 1
                switch line {
                case .line(let bytes):
                    let data = Data(bytes)
                    group.addTask { (index, await verify(line: data)) }
                case .tooLong:
                    group.addTask { (index, Self.malformedLine(id: nil, "the input line is longer than the limit")) }
                }
            }
            for _ in 0..<parallelism { startNext() }
            while let (index, report) = await group.next() {
                pending[index] = report
                while let ready = pending.removeValue(forKey: nextToPrint) {
                    if !ready.result.isVerified { allVerified = false }
                    output.write(ready.jsonLine + "\n")
                    nextToPrint += 1
                }
                startNext()
            }
        }
        return allVerified
    }

    private func verify(line: Data) async -> VerificationReport {
        let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any]
        let id = object?["id"].flatMap(BatchInputID.init)
        guard let body = object?["body"] as? String else {
            return Self.malformedLine(id: id, "the input line is not a JSON object with a \"body\" string")
        }
        return VerificationReport(id: id, result: await verifier.verify(body: Data(body.utf8)))
    }

    private static func malformedLine(id: BatchInputID?, _ reason: String) -> VerificationReport {
        VerificationReport(id: id, result: .rejected(VerificationError(code: .malformedBody, reason: reason)))
    }
}
