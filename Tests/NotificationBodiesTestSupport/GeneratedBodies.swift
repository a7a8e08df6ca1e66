import AppStoreModels
import AppStoreSigning
import Foundation
import NotificationBodies
import Testing

/// Bodies signed with the test PKI and mutated in the ways real and hostile senders encode things, from a seed.
///
/// The choices and positions follow the seed; ECDSA signatures and the test PKI's keys do not, so lengths may differ
/// by a byte between runs. A failure names the chunk, index and mutation.
package struct GeneratedBodies {
    package enum Mutation: CaseIterable, Sendable {
        case valid, tampered, innerHeaderDiffers, escapedInnerStrings, whitespace, escapedEnvelope, twoJWSStrings
        case paddedSegment, nonCanonicalLastCharacter, innerSpareBits, innerPadded, truncated, byteFlips, nonUTF8
        case empty
    }

    package struct Body {
        package var mutation: Mutation
        package var bytes: [UInt8]
        package var expectedFormat: PackedBody.Format?
        package var expectedHeaderCount: Int?
    }

    /// String contents with escapes: quotes and backslashes in odd and even runs, `\/` and `\u0041`.
    package static let escapes = [
        #"\""#, #"a\"b\\"#, #"\\\""#, #"\\"#, #"\\\\"#, #"a\/b \u0041 \"q\" \\"#, #"\u0022\\"#,
    ]

    private static let signers: (main: NotificationSigner, other: NotificationSigner)? = try? (
        NotificationSigner(signer: JWSSigner(pki: TestPKI())),
        NotificationSigner(signer: JWSSigner(pki: TestPKI(configuration: .init(name: "asnp Other"))))
    )

    private var random: SeededGenerator
    private var count = 0

    package init(seed: UInt64) {
        random = SeededGenerator(seed: seed &* 0x9E37_79B9 &+ 27)
    }

    package mutating func next() throws -> Body {
        let signers = try #require(Self.signers)
        let mutation = Mutation.allCases[count % Mutation.allCases.count]
        count += 1
        let event = randomEvent()
        let payload = try signers.main.payload(for: event)
        let jws = try signers.main.signer.sign(payload)
        let envelope = try NotificationSigner.envelope(jws)
        switch mutation {
        case .valid:
            return Body(
                mutation: mutation,
                bytes: Array(envelope.utf8),
                expectedFormat: .packedV2,
                expectedHeaderCount: 1
            )
        case .tampered:
            return Body(
                mutation: mutation,
                bytes: Array(NotificationSigner.tampered(envelope).utf8),
                expectedFormat: .packedV2
            )
        case .innerHeaderDiffers:
            let body = try signers.main.body(for: try signers.other.payload(for: event))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV2, expectedHeaderCount: 2)
        case .escapedInnerStrings:
            var json = String(decoding: try JSONEncoder().encode(payload), as: UTF8.self)
            let fake = String(repeating: "h", count: 64 + Int.random(in: 0..<8, using: &random)) + ".."
            json.removeFirst()
            json =
                #"{"note":"\#(GeneratedBodies.escapes.randomElement(using: &random)!)","fake":"\#(fake)","#
                + json.replacingOccurrences(of: #""signedTransactionInfo""#, with: #""signed\u0054ransactionInfo""#)
            let body = try NotificationSigner.envelope(try signers.main.signer.sign(payloadJSON: Data(json.utf8)))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV2, expectedHeaderCount: 2)
        case .whitespace:
            let spaces = (0..<6).map { _ in [" ", "", "\n", "\t", "\r\n", "  \n "].randomElement(using: &random)! }
            let body =
                "\(spaces[0]){\(spaces[1])\"signedPayload\"\(spaces[2]):\(spaces[3])\"\(jws)\"\(spaces[4])}\(spaces[5])"
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV2, expectedHeaderCount: 1)
        case .escapedEnvelope:
            // Odd runs of escaped quotes, and strings ending in an escaped backslash: a scan that miscounts either
            // loses its place and takes the JWS for text between strings.
            let escape = GeneratedBodies.escapes.randomElement(using: &random)!
            let body = #"{"note":"\#(escape)","signed\u0050ayload":"\#(jws)","y":"\/"}"#
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV2, expectedHeaderCount: 1)
        case .twoJWSStrings:
            let body = #"{"signedPayload":"\#(jws)","again":"\#(jws)"}"#
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .packedV2, expectedHeaderCount: 1)
        case .paddedSegment:
            var segments = jws.split(separator: ".").map(String.init)
            segments[Int.random(in: 0..<3, using: &random)] += Bool.random(using: &random) ? "=" : "=="
            let body = try NotificationSigner.envelope(segments.joined(separator: "."))
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: .verbatim)
        case .nonCanonicalLastCharacter:
            var segments = jws.split(separator: ".").map { Array($0.utf8) }
            let segment = Int.random(in: 0..<3, using: &random)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            let value = try #require(alphabet.firstIndex(of: segments[segment].last!))
            segments[segment][segments[segment].count - 1] = alphabet[value | 1]
            let body = try NotificationSigner.envelope(
                String(decoding: Array(segments.joined(separator: [46])), as: UTF8.self)
            )
            // Spare bits in the payload leave nothing to pack; in the signature, only format 2 decodes it.
            let spareBits = segments[segment].count % 4 != 0
            let expected: PackedBody.Format = spareBits ? [.packedV2, .verbatim, .packedV1][segment] : .packedV2
            return Body(mutation: mutation, bytes: Array(body.utf8), expectedFormat: expected, expectedHeaderCount: nil)
        case .innerSpareBits, .innerPadded:
            return try innerNonCanonical(mutation, payload, signer: signers.main.signer)
        case .truncated:
            let bytes = Array(envelope.utf8)
            return Body(mutation: mutation, bytes: Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random))))
        case .byteFlips:
            var bytes = Array(envelope.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return Body(mutation: mutation, bytes: bytes)
        case .nonUTF8:
            var bytes = Array(envelope.utf8)
            let invalid: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xF0, 0x90, 0x28, 0xBC], [0x80]]
            if Bool.random(using: &random) {
                // Beside the JWS, in a string of its own: still packed, the bytes carried in the prefix.
                bytes =
                    Array(#"{"note":""#.utf8) + invalid.randomElement(using: &random)!
                    + Array(#"","signedPayload":""#.utf8)
                bytes += Array(jws.utf8) + Array(#""}"#.utf8)
                return Body(mutation: mutation, bytes: bytes, expectedFormat: .packedV2, expectedHeaderCount: 1)
            }
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0...bytes.count, using: &random)
                bytes.insert(contentsOf: invalid.randomElement(using: &random)!, at: position)
            }
            return Body(mutation: mutation, bytes: bytes)
        case .empty:
            return Body(mutation: mutation, bytes: [], expectedFormat: .verbatim, expectedHeaderCount: 0)
        }
    }

    /// A body whose signed transaction or renewal info has a payload or signature that is not canonical base64url:
    /// spare bits set, which the scan takes for a JWS that format 2 cannot decode (so format 1 holds it); or padding,
    /// outside the alphabet, so that the scan sees no JWS and the packer leaves that string as text.
    private mutating func innerNonCanonical(
        _ mutation: Mutation,
        _ payload: ResponseBodyV2DecodedPayload,
        signer: JWSSigner
    ) throws -> Body {
        var payload = payload
        var data = try #require(payload.data)
        let renewal = Bool.random(using: &random)
        var segments = try #require(renewal ? data.signedRenewalInfo : data.signedTransactionInfo)
            .split(separator: ".").map { Array($0.utf8) }
        // A segment whose length is a multiple of four has no spare bits; the signature (86 characters) always has.
        var segment = Int.random(in: 1...2, using: &random)
        if mutation == .innerSpareBits, segments[segment].count % 4 == 0 { segment = 2 }
        if mutation == .innerSpareBits {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
            let value = try #require(alphabet.firstIndex(of: segments[segment].last!))
            segments[segment][segments[segment].count - 1] = alphabet[value | 1]
        } else {
            segments[segment] += Array((Bool.random(using: &random) ? "=" : "==").utf8)
        }
        let mutated = String(decoding: Array(segments.joined(separator: [46])), as: UTF8.self)
        if renewal { data.signedRenewalInfo = mutated } else { data.signedTransactionInfo = mutated }
        payload.data = data
        let body = try NotificationSigner.envelope(try signer.sign(payload))
        return Body(
            mutation: mutation,
            bytes: Array(body.utf8),
            expectedFormat: mutation == .innerSpareBits ? .packedV1 : .packedV2,
            expectedHeaderCount: 1
        )
    }

    private mutating func randomEvent() -> SubscriptionEvent {
        let (type, subtype) = SubscriptionEvent.typicalLifecycle.randomElement(using: &random)!
        let start: Int64 = 1_767_225_600_000
        let signedDate = start + Int64.random(in: 0..<10_000_000_000, using: &random)
        let revoked = Int.random(in: 0..<10, using: &random) == 0
        return SubscriptionEvent(
            notificationType: revoked ? .refund : type,
            subtype: revoked ? nil : subtype,
            notificationUUID: String(random.next(), radix: 16) + "-" + String(random.next(), radix: 16),
            signedDate: signedDate,
            bundleId: ["com.example.notes", "com.example.photos.pro"].randomElement(using: &random)!,
            appAppleId: Bool.random(using: &random) ? Int64.random(in: 1...9_999_999_999, using: &random) : nil,
            environment: Bool.random(using: &random) ? .sandbox : .production,
            originalTransactionId: String(Int.random(in: 1...999_999_999_999, using: &random)),
            transactionId: String(Int.random(in: 1...999_999_999_999_999, using: &random)),
            productId: "com.example.notes.pro." + ["monthly", "yearly", "weekly"].randomElement(using: &random)!,
            revocationDate: revoked ? signedDate : nil
        )
    }
}
