import AppStoreModels
import AppStoreSigning
import AppStoreTestSupport
import AppStoreVerification
import Foundation
import Testing
import VerificationTestSupport

/// Structure-aware fuzzing of what a signature does not stop: payloads of every shape, correctly signed, reach the
/// decoders; mutated certificates reach the x5c parser; V1 bodies (unsigned) reach theirs. Every input must get a
/// status without a crash or a hang, and OK only for what was signed.
///
/// `ASNP_FUZZ_ITERATIONS` sets the cases per test (default 300, a few seconds; raise it for a longer run), and
/// `ASNP_FUZZ_SEED` replays a run: each failure message names its seed.
@Suite("Structure-aware fuzzing: signed payloads, certificates and V1 bodies of every shape", .tags(.fast))
struct StructuredFuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["ASNP_FUZZ_ITERATIONS"] ?? "") ?? 300
    static let seed =
        UInt64(ProcessInfo.processInfo.environment["ASNP_FUZZ_SEED"] ?? "") ?? UInt64.random(in: 1...1 << 40)
    static let bundleId = "com.example.tests"

    @Test(
        "re-signed payloads with mutated JSON (types, nesting, numbers, strings) get a status; OK keeps what was signed"
    )
    func signedPayloads() async throws {
        let pki = try TestPKI()
        let signer = NotificationSigner(signer: try JWSSigner(pki: pki))
        let verifier = try TestVerifiers.make(roots: [pki.root], bundleId: Self.bundleId)
        let events = SubscriptionEvent.samples(count: 6, bundleId: Self.bundleId)
        var generator = SeededGenerator(seed: Self.seed)
        var statuses: [String: Int] = [:]
        for index in 0..<Self.iterations {
            let event = events[index % events.count]
            var payload = try Self.object(JSONEncoder().encode(try signer.payload(for: event)))
            // Half the time the inner transaction or renewal info is mutated and signed again too.
            if Bool.random(using: &generator), var data = payload["data"] as? [String: Any] {
                let member = Bool.random(using: &generator) ? "signedTransactionInfo" : "signedRenewalInfo"
                if let inner = data[member] as? String, let innerPayload = Self.payload(of: inner) {
                    var innerObject = innerPayload
                    JSONMutator.mutate(&innerObject, using: &generator)
                    data[member] = try signer.signer.sign(
                        payloadJSON: try JSONSerialization.data(withJSONObject: innerObject)
                    )
                    payload["data"] = data
                }
            }
            JSONMutator.mutate(&payload, using: &generator)
            let signedPayload = try signer.signer.sign(payloadJSON: try JSONSerialization.data(withJSONObject: payload))
            let result = await verifier.verify(body: Array(try NotificationSigner.envelope(signedPayload).utf8))
            #expect(!result.status.isEmpty, "seed \(Self.seed), case \(index)")
            statuses[result.status, default: 0] += 1
            if let notification = result.v2 {
                #expect(result.status == "OK")
                #expect(
                    notification.payload.notificationUUID == payload["notificationUUID"] as? String,
                    "seed \(Self.seed), case \(index): OK must carry the signed notificationUUID"
                )
            }
        }
        // Both outcomes occur: mutations the decoders accept (unknown members, say) and ones they refuse.
        #expect(statuses["OK", default: 0] > 0, "\(statuses)")
        #expect(statuses.count > 1, "\(statuses)")
    }

    @Test("x5c entries with flipped, cut or grown DER bytes are never OK")
    func certificates() async throws {
        let pki = try TestPKI()
        let verifier = try TestVerifiers.make(roots: [pki.root], bundleId: Self.bundleId)
        let payload = ResponseBodyV2DecodedPayload(notificationType: .test, notificationUUID: "u", signedDate: 1)
        var generator = SeededGenerator(seed: Self.seed)
        for index in 0..<Self.iterations {
            var x5c = pki.x5c
            let position = Int.random(in: 0..<x5c.count, using: &generator)
            var der = try #require(Data(base64Encoded: x5c[position])).map { $0 }
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<der.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: der[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
                case 1: der.removeSubrange(at..<min(der.count, at + Int.random(in: 1...16, using: &generator)))
                default:
                    der.insert(
                        contentsOf: (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                            UInt8.random(in: 0...255, using: &generator)
                        },
                        at: at
                    )
                }
                if der.isEmpty { der = [0] }
            }
            x5c[position] = Data(der).base64EncodedString()
            let signedPayload = try JWSSigner(key: pki.leafKey, x5c: x5c).sign(payload)
            let result = await verifier.verify(body: Array(try NotificationSigner.envelope(signedPayload).utf8))
            #expect(!result.status.isEmpty)
            #expect(result.status != "OK", "seed \(Self.seed), case \(index): certificate \(position) altered")
        }
    }

    @Test("V1 bodies with mutated JSON get a status and never echo the shared secret")
    func v1Bodies() async throws {
        let verifier = try TestVerifiers.fixtures()
        let valid = Fixtures.v1Cases.filter { $0.expectedStatus == "OK" }
        try #require(!valid.isEmpty)
        var generator = SeededGenerator(seed: Self.seed)
        for index in 0..<Self.iterations {
            var body = try Self.object(Data(valid[index % valid.count].body.utf8))
            JSONMutator.mutate(&body, using: &generator)
            let bytes = try JSONSerialization.data(withJSONObject: body)
            let result = await verifier.verify(body: Array(bytes))
            #expect(!result.status.isEmpty, "seed \(Self.seed), case \(index)")
            #expect(result.error?.reason.contains(Fixtures.sharedSecret) != true)
        }
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The decoded payload of a compact JWS, if it is a JSON object.
    static func payload(of jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }
}

/// Random edits of a JSON tree: members deleted, replaced by values of other types, wrapped, nested deep.
enum JSONMutator {
    static func mutate(_ object: inout [String: Any], using generator: inout SeededGenerator) {
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            mutateOne(&object, using: &generator, depth: 0)
        }
    }

    private static func mutateOne(_ object: inout [String: Any], using generator: inout SeededGenerator, depth: Int) {
        guard let key = object.keys.sorted().randomElement(using: &generator) else {
            object["x"] = value(using: &generator, depth: 0)
            return
        }
        // Descend into nested objects now and then, so inner members get edited too.
        if var nested = object[key] as? [String: Any], depth < 4, Bool.random(using: &generator) {
            mutateOne(&nested, using: &generator, depth: depth + 1)
            object[key] = nested
            return
        }
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: object[key] = nil
        case 1: object[key] = [object[key] ?? NSNull()]
        case 2: object[key + String(Int.random(in: 0...9, using: &generator))] = value(using: &generator, depth: 0)
        default: object[key] = value(using: &generator, depth: 0)
        }
    }

    /// A random JSON value: every type, edge numbers, odd strings, and now and then a deep nest.
    static func value(using generator: inout SeededGenerator, depth: Int) -> Any {
        let strings = [
            "", " ", "0", "-1", "1e400", "true", "null", "\u{0}", "\"", "\\", "é", "𝄞", "\u{202E}",
            String(repeating: "A", count: 10_000), "2026-01-01T00:00:00Z", "Sandbox", "Production",
        ]
        switch Int.random(in: 0..<10, using: &generator) {
        case 0: return NSNull()
        case 1: return Bool.random(using: &generator)
        case 2: return [Int64.max, Int64.min, 0, -1, 1 << 53, 1_767_225_600_000].randomElement(using: &generator)!
        case 3: return [1.5, -0.0, 1e308, Double.leastNonzeroMagnitude, 0.1].randomElement(using: &generator)!
        case 4, 5: return strings.randomElement(using: &generator)!
        case 6 where depth < 3:
            return (0..<Int.random(in: 0...4, using: &generator)).map { _ in value(using: &generator, depth: depth + 1)
            }
        case 7 where depth < 3:
            return ["k": value(using: &generator, depth: depth + 1)]
        case 8:
            // Deep nesting: the decoders bound their depth instead of recursing without end.
            var nested: Any = 1
            for _ in 0..<Int.random(in: 10...600, using: &generator) { nested = [nested] }
            return nested
        default:
            return String(Int.random(in: 0...Int.max, using: &generator))
        }
    }
}
