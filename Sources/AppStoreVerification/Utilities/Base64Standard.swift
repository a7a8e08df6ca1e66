#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Strict standard base64 (RFC 4648 §4, padded), as `x5c` certificates and PEM bodies use it.
enum Base64Standard {
    /// Decodes `text`, or returns nil for characters outside the alphabet or bad padding.
    static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map(Array.init)
    }
}
