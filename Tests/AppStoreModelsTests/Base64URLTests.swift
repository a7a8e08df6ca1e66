import AppStoreTestSupport
import Foundation
import Testing

@testable import AppStoreModels

@Suite("base64url", .tags(.fast))
struct Base64URLTests {
    @Test("encode matches Foundation's base64 in the URL alphabet without padding, and decode reverses it")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let reference = Data(bytes).base64EncodedString()
                .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
            #expect(encoded == reference, "\(length) bytes")
            #expect(Base64URL.decode(encoded) == bytes, "\(length) bytes")
        }
    }

    @Test("decode refuses every byte outside the alphabet, in any position, and any non-zero leftover bits")
    func decodeRefuses() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        for length in [2, 3, 4, 6, 7, 8, 63, 64] {
            let valid = Array(Base64URL.encode((0..<(length * 3 / 4)).map { _ in UInt8.random(in: 0...255) }).utf8)
            #expect(valid.count == length)
            #expect(Base64URL.decode(String(decoding: valid, as: UTF8.self)) != nil, "\(length) characters")
            for byte in UInt8.min...UInt8.max where !alphabet.contains(byte) {
                var text = valid
                text[Int.random(in: 0..<length, using: &generator)] = byte
                #expect(text.withUnsafeBufferPointer { Base64URL.decode($0) } == nil, "\(byte) in \(length)")
            }
        }
        // A last character whose spare bits are set: after 2 characters 4 bits, after 3 characters 2 bits.
        let endings = [("AA", true), ("AB", false), ("AQ", true), ("AAA", true), ("AAB", false), ("AAE", true)]
        for (text, accepted) in endings {
            #expect((Base64URL.decode(text) != nil) == accepted, "\(text)")
        }
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("") == [])
    }

    @Test("decode matches Foundation on random text of the alphabet, padding added for Foundation")
    func decodeMatchesFoundation() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<200, using: &generator)
            let characters = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            let text = String(decoding: characters, as: UTF8.self)
            let standard = text.replacing("-", with: "+").replacing("_", with: "/")
            let padded = standard + String(repeating: "=", count: (4 - length % 4) % 4)
            let reference = Data(base64Encoded: padded).map(Array.init)
            let decoded = Base64URL.decode(text)
            if let decoded {
                #expect(decoded == reference, "\(text)")
                #expect(Base64URL.encode(decoded) == text, "\(text)")
            } else {
                // Refused: an impossible length, or set spare bits (which Foundation ignores).
                #expect(length % 4 == 1 || reference.map { Base64URL.encode($0) != text } ?? true, "\(text)")
            }
        }
    }

    @Test("isEncoding accepts exactly the text encode gives, and encodedCount is its length")
    func compareWhileEncoding() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Array(Base64URL.encode(bytes).utf8)
            #expect(Base64URL.encodedCount(length) == text.count)
            func isEncoding(_ candidate: [UInt8]) -> Bool {
                bytes.withUnsafeBufferPointer { bytes in
                    candidate.withUnsafeBufferPointer { Base64URL.isEncoding(of: bytes, $0) }
                }
            }
            #expect(isEncoding(text), "\(length) bytes")
            // Any one character changed, one too many or one too few: not the encoding.
            for position in text.indices {
                var changed = text
                changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                #expect(!isEncoding(changed), "\(length) bytes, character \(position)")
            }
            #expect(!isEncoding(text + [UInt8(ascii: "A")]))
            if !text.isEmpty { #expect(!isEncoding(Array(text.dropLast()))) }
        }
    }
}
