import AppStoreModels

/// The parts of a packed (format 1) body: the bytes around the outer JWS, its header and each inner header by digest,
/// the decoded outer payload between those inner headers, and the signature as text.
///
/// Laid out in ``PackedBody/bytes`` after the format byte, lengths as unsigned LEB128 varints:
/// `prefix`, outer header digest (32 bytes), `k`, k × (`literal`, inner header digest), `tail`, `signature`,
/// `suffix`; every byte string as its length then its bytes. The outer payload is kept decoded because its base64url
/// text would hide the inner headers; it is re-encoded on the way out, which is exact only for canonical base64url,
/// hence the packer's round-trip check.
struct PackedForm {
    /// Text of the decoded outer payload followed by an inner JWS header, by digest.
    struct Piece {
        var literal: ArraySlice<UInt8>
        var header: JWSHeaderDigest
    }

    /// Everything in the body before the outer JWS (`{"signedPayload": "`).
    var prefix: ArraySlice<UInt8>
    /// The outer JWS header.
    var header: JWSHeaderDigest
    /// The decoded outer payload up to and including its last inner header.
    var pieces: [Piece]
    /// The decoded outer payload after its last inner header.
    var tail: ArraySlice<UInt8>
    /// The outer signature, base64url text as it stood.
    var signature: ArraySlice<UInt8>
    /// Everything in the body after the outer JWS (`"}`).
    var suffix: ArraySlice<UInt8>

    /// The format byte of this layout in ``PackedBody/bytes``.
    static let format = PackedBody.Format.packedV1

    /// The headers referred to, each once, outer first.
    var digests: [JWSHeaderDigest] {
        var seen: Set<JWSHeaderDigest> = [header]
        return [header] + pieces.map(\.header).filter { seen.insert($0).inserted }
    }

    /// The stored bytes, format byte first.
    func encoded() -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(
            prefix.count + tail.count + signature.count + suffix.count + pieces.count * 48 + 64
                + pieces.reduce(0) { $0 + $1.literal.count }
        )
        writer.bytes.append(Self.format.rawValue)
        writer.append(length: prefix)
        writer.bytes += header.bytes
        writer.append(varint: pieces.count)
        for piece in pieces {
            writer.append(length: piece.literal)
            writer.bytes += piece.header.bytes
        }
        writer.append(length: tail)
        writer.append(length: signature)
        writer.append(length: suffix)
        return writer.bytes
    }

    /// Reads a stored form whose first byte is ``format``.
    init(decoding stored: [UInt8]) throws(PackedBodyError) {
        var reader = Reader(stored[1...])
        prefix = try reader.lengthPrefixed()
        header = try reader.digest()
        let count = try reader.varint()
        // Each piece takes at least 33 bytes: a bound that keeps a corrupt count from reserving memory.
        guard count <= reader.remaining / (JWSHeaderDigest.byteCount + 1) else {
            throw PackedBodyError(code: .truncated, reason: "\(count) inner headers announced, too few bytes left")
        }
        pieces = []
        pieces.reserveCapacity(count)
        for _ in 0..<count {
            pieces.append(Piece(literal: try reader.lengthPrefixed(), header: try reader.digest()))
        }
        tail = try reader.lengthPrefixed()
        signature = try reader.lengthPrefixed()
        suffix = try reader.lengthPrefixed()
        guard reader.remaining == 0 else {
            throw PackedBodyError(code: .malformed, reason: "\(reader.remaining) bytes after the end of the form")
        }
    }

    init(
        prefix: ArraySlice<UInt8>,
        header: JWSHeaderDigest,
        pieces: [Piece],
        tail: ArraySlice<UInt8>,
        signature: ArraySlice<UInt8>,
        suffix: ArraySlice<UInt8>
    ) {
        self.prefix = prefix
        self.header = header
        self.pieces = pieces
        self.tail = tail
        self.signature = signature
        self.suffix = suffix
    }

    /// The original body, each header looked up in `headers` and checked against its digest.
    func rebuilt(headers: (JWSHeaderDigest) -> [UInt8]?) throws(PackedBodyError) -> [UInt8] {
        func text(of digest: JWSHeaderDigest) throws(PackedBodyError) -> [UInt8] {
            guard let text = headers(digest) else {
                throw PackedBodyError(code: .missingHeader, reason: "no JWS header with digest \(digest)")
            }
            guard JWSHeaderDigest(of: text[...]) == digest else {
                throw PackedBodyError(
                    code: .headerMismatch,
                    reason: "the header given for \(digest) has another digest"
                )
            }
            return text
        }
        var payload: [UInt8] = []
        for piece in pieces {
            payload += piece.literal
            payload += try text(of: piece.header)
        }
        payload += tail
        var body = Array(prefix)
        body += try text(of: header)
        body.append(UInt8(ascii: "."))
        body += Base64URL.encodedBytes(payload)
        body.append(UInt8(ascii: "."))
        body += signature
        body += suffix
        return body
    }
}
