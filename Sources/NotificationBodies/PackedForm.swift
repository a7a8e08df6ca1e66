/// The parts of a packed body: the bytes around the outer JWS, its header and each inner header by digest, the
/// decoded outer payload between the inner JWS literals, and the outer signature.
///
/// Laid out in ``PackedBody/bytes`` after the format byte, lengths as unsigned LEB128 varints:
/// `prefix`, outer header digest (32 bytes), `k`, k × (`literal`, inner header digest[, inner `payload`, inner
/// `signature`]), `tail`, `signature`, `suffix`; every byte string as its length then its bytes. The outer payload is
/// kept decoded because its base64url text would hide the inner headers; it is re-encoded on the way out, which is
/// exact only for canonical base64url, hence the packer's round-trip check.
///
/// The two formats differ only in how much stays base64url text. Format 1 keeps each inner JWS's `.payload.signature`
/// as text at the start of the next literal, and the outer signature as text. Format 2 stores the inner payload and
/// signature (the bracketed fields) and the outer signature decoded: a fifth smaller, and raw bytes are what the
/// column's compression can work on, where base64url text barely compresses.
struct PackedForm {
    /// Text of the decoded outer payload followed by an inner JWS, its header by digest.
    struct Piece {
        var literal: ArraySlice<UInt8>
        var header: JWSHeaderDigest
        /// The inner JWS's payload and signature, decoded (format 2); nil in format 1, which leaves them as text at
        /// the start of the next literal.
        var segments: DecodedSegments?
    }

    /// The payload and signature of a JWS, base64url-decoded.
    struct DecodedSegments {
        var payload: ArraySlice<UInt8>
        var signature: ArraySlice<UInt8>
    }

    /// ``PackedBody/Format/packedV1`` or ``PackedBody/Format/packedV2``: how much of the JWS text is decoded.
    var format: PackedBody.Format
    /// Everything in the body before the outer JWS (`{"signedPayload": "`).
    var prefix: ArraySlice<UInt8>
    /// The outer JWS header.
    var header: JWSHeaderDigest
    /// The decoded outer payload up to and including its last inner JWS (format 2) or inner header (format 1).
    var pieces: [Piece]
    /// The decoded outer payload after its last piece.
    var tail: ArraySlice<UInt8>
    /// The outer signature: base64url text as it stood (format 1), or decoded (format 2).
    var signature: ArraySlice<UInt8>
    /// Everything in the body after the outer JWS (`"}`).
    var suffix: ArraySlice<UInt8>

    /// Whether the JWS payloads and signatures are stored decoded.
    var decodesSegments: Bool { format == .packedV2 }

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
                + pieces.reduce(0) {
                    $0 + $1.literal.count + ($1.segments.map { $0.payload.count + $0.signature.count + 8 } ?? 0)
                }
        )
        writer.bytes.append(format.rawValue)
        writer.append(length: prefix)
        writer.bytes += header.bytes
        writer.append(varint: pieces.count)
        for piece in pieces {
            writer.append(length: piece.literal)
            writer.bytes += piece.header.bytes
            if let segments = piece.segments {
                writer.append(length: segments.payload)
                writer.append(length: segments.signature)
            }
        }
        writer.append(length: tail)
        writer.append(length: signature)
        writer.append(length: suffix)
        return writer.bytes
    }

    /// Reads a stored form whose first byte is ``PackedBody/Format/packedV1`` or ``PackedBody/Format/packedV2``.
    init(decoding stored: [UInt8]) throws(PackedBodyError) {
        format = PackedBody.Format(rawValue: stored[0])
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
        let decodesSegments = format == .packedV2
        for _ in 0..<count {
            let literal = try reader.lengthPrefixed()
            let header = try reader.digest()
            let segments =
                decodesSegments
                ? DecodedSegments(payload: try reader.lengthPrefixed(), signature: try reader.lengthPrefixed()) : nil
            pieces.append(Piece(literal: literal, header: header, segments: segments))
        }
        tail = try reader.lengthPrefixed()
        signature = try reader.lengthPrefixed()
        suffix = try reader.lengthPrefixed()
        guard reader.remaining == 0 else {
            throw PackedBodyError(code: .malformed, reason: "\(reader.remaining) bytes after the end of the form")
        }
    }

    init(
        format: PackedBody.Format,
        prefix: ArraySlice<UInt8>,
        header: JWSHeaderDigest,
        pieces: [Piece],
        tail: ArraySlice<UInt8>,
        signature: ArraySlice<UInt8>,
        suffix: ArraySlice<UInt8>
    ) {
        self.format = format
        self.prefix = prefix
        self.header = header
        self.pieces = pieces
        self.tail = tail
        self.signature = signature
        self.suffix = suffix
    }
}
