import Foundation
import Testing

@testable import AppStoreModels

@Suite("base64url")
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
}
