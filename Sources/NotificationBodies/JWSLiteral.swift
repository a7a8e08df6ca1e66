import AppStoreModels

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A compact JWS (`header.payload.signature`) that is the whole content of a JSON string literal: where the packer
/// finds the headers it can store by reference.
///
/// The scan knows only enough JSON to find where string literals begin and end; it never validates the text, because
/// whatever it finds is only a guess that the packer confirms by rebuilding the body.
struct JWSLiteral {
    /// The header segment's bytes in the scanned text.
    var header: Range<Int>
    /// The payload segment's bytes.
    var payload: Range<Int>
    /// The signature segment's bytes.
    var signature: Range<Int>

    /// The shortest header worth a reference: the 32-byte digest and its framing must save more than they cost, and
    /// App Store headers (an `x5c` chain) run to thousands of characters.
    static let minimumHeaderLength = 64

    /// The JWS literals in `text`, in order, at most `limit` of them. A header `isKnownHeader` says was found before
    /// (a body repeats its header in every JWS, and bodies the same few headers) is taken without checking its
    /// characters again.
    static func find(
        in text: UnsafeBufferPointer<UInt8>,
        limit: Int = .max,
        isKnownHeader: (UnsafeBufferPointer<UInt8>) -> Bool = { _ in false }
    ) -> [JWSLiteral] {
        var found: [JWSLiteral] = []
        var position = 0
        while found.count < limit, let open = index(of: UInt8(ascii: "\""), in: text, from: position) {
            guard let close = closingQuote(in: text, openedAt: open) else { break }
            if let literal = JWSLiteral(text, content: (open + 1)..<close, isKnownHeader: isKnownHeader) {
                found.append(literal)
            }
            position = close + 1
        }
        return found
    }

    /// The segments of `text[content]`, or nil unless it is three segments split by dots, the first long enough, the
    /// first and last base64url. The payload, the longest, is not checked here (``hasBase64URLPayload(in:)``): the
    /// packer decodes it, which checks it.
    private init?(
        _ text: UnsafeBufferPointer<UInt8>,
        content: Range<Int>,
        isKnownHeader: (UnsafeBufferPointer<UInt8>) -> Bool
    ) {
        guard content.count > Self.minimumHeaderLength + 1,
            let segments = CompactJWSSegments(UnsafeBufferPointer(rebasing: text[content])),
            segments.header.count >= Self.minimumHeaderLength
        else { return nil }
        let header = segments.header.shifted(by: content.lowerBound)
        let signature = segments.signature.shifted(by: content.lowerBound)
        guard
            isKnownHeader(UnsafeBufferPointer(rebasing: text[header]))
                || Self.isBase64URL(text, header.lowerBound, header.upperBound),
            Self.isBase64URL(text, signature.lowerBound, signature.upperBound)
        else { return nil }
        self.header = header
        self.payload = segments.payload.shifted(by: content.lowerBound)
        self.signature = signature
    }

    /// Whether the payload holds only base64url characters: for a payload that does not decode, whether it is not a
    /// JWS at all or a non-canonical one.
    func hasBase64URLPayload(in text: [UInt8]) -> Bool {
        text.withUnsafeBufferPointer { Self.isBase64URL($0, payload.lowerBound, payload.upperBound) }
    }

    /// The quote ending the string literal opened at `open`: the first quote after it not escaped by an odd run of
    /// backslashes (escapes are pairs, so `\\"` ends a string and `\\\"` does not).
    private static func closingQuote(in text: UnsafeBufferPointer<UInt8>, openedAt open: Int) -> Int? {
        var position = open + 1
        while let quote = index(of: UInt8(ascii: "\""), in: text, from: position) {
            var backslashes = 0
            while text[quote - 1 - backslashes] == UInt8(ascii: "\\") { backslashes += 1 }
            if backslashes % 2 == 0 { return quote }
            position = quote + 1
        }
        return nil
    }

    /// Whether `text[start..<end]` holds only base64url characters.
    private static func isBase64URL(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        alphabet.withUnsafeBufferPointer { alphabet in
            // A plain loop: iterating `start..<end` here was not specialised, and cost a call per byte.
            var position = start
            while position < end {
                guard alphabet[Int(text[position])] else { return false }
                position += 1
            }
            return true
        }
    }

    /// The base64url alphabet, by ASCII code.
    private static let alphabet: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for character in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8 {
            table[Int(character)] = true
        }
        return table
    }()

    /// The first `byte` in `text` at or after `start`; memchr, because bodies are long runs without quotes.
    private static func index(of byte: UInt8, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = text.baseAddress, start < text.count,
            let found = memchr(base + start, Int32(byte), text.count - start)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}

extension Range<Int> {
    fileprivate func shifted(by offset: Int) -> Range<Int> {
        (lowerBound + offset)..<(upperBound + offset)
    }
}
