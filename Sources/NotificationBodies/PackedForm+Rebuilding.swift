import AppStoreModels

extension PackedForm {
    /// The original body, each header looked up in `headers` and checked against its digest.
    func rebuilt(headers: (JWSHeaderDigest) -> [UInt8]?) throws(PackedBodyError) -> [UInt8] {
        var body = BodyBytes()
        try rebuild(headers: headers, checkingDigests: true, into: &body)
        return body.bytes
    }

    /// Whether the form rebuilds exactly `raw`, with `headers` (the texts the packer has just hashed, so not
    /// hashed again): the same rebuilding as ``rebuilt(headers:)``, its output compared with `raw` as it comes
    /// rather than gathered first.
    func rebuilds(_ raw: [UInt8], headers: (JWSHeaderDigest) -> [UInt8]?) -> Bool {
        raw.withUnsafeBufferPointer { raw in
            var comparison = BodyComparison(expected: raw)
            guard (try? rebuild(headers: headers, checkingDigests: false, into: &comparison)) != nil else {
                return false
            }
            return comparison.matches && comparison.position == raw.count
        }
    }

    /// The rebuilding itself, into `body`: each header looked up in `headers` and, if `checkingDigests`, checked
    /// against its digest.
    private func rebuild(
        headers: (JWSHeaderDigest) -> [UInt8]?,
        checkingDigests: Bool,
        into body: inout some RebuiltBody
    ) throws(PackedBodyError) {
        // A body repeats its header in every JWS: each is hashed once, the hashing being most of an unpack's time.
        var checked: [JWSHeaderDigest: [UInt8]] = [:]
        func text(_ digest: JWSHeaderDigest) throws(PackedBodyError) -> [UInt8] {
            if let text = checked[digest] { return text }
            guard let text = headers(digest) else {
                throw PackedBodyError(code: .missingHeader, reason: "no JWS header with digest \(digest)")
            }
            guard !checkingDigests || JWSHeaderDigest(of: text[...]) == digest else {
                throw PackedBodyError(
                    code: .headerMismatch,
                    reason: "the header given for \(digest) has another digest"
                )
            }
            checked[digest] = text
            return text
        }
        var payload: [UInt8] = []
        payload.reserveCapacity(
            pieces.reduce(tail.count) { total, piece in
                // The header's length is not known before it is looked up; an App Store header is about 4.7 KB.
                total + piece.literal.count + 4_800
                    + (piece.segments.map {
                        Base64URL.encodedCount($0.payload.count) + Base64URL.encodedCount($0.signature.count) + 2
                    } ?? 0)
            }
        )
        for piece in pieces {
            payload += piece.literal
            payload += try text(piece.header)
            if let segments = piece.segments {
                payload.append(UInt8(ascii: "."))
                payload += Base64URL.encodedBytes(segments.payload)
                payload.append(UInt8(ascii: "."))
                payload += Base64URL.encodedBytes(segments.signature)
            }
        }
        payload += tail
        let header = try text(header)
        body.reserve(
            prefix.count + header.count + Base64URL.encodedCount(payload.count)
                + Base64URL.encodedCount(signature.count) + suffix.count + 2
        )
        body.append(prefix)
        body.append(header[...])
        body.append(Self.dot)
        body.append(encoding: payload[...])
        body.append(Self.dot)
        if decodesSegments {
            body.append(encoding: signature)
        } else {
            body.append(signature)
        }
        body.append(suffix)
    }

    private static let dot: ArraySlice<UInt8> = [UInt8(ascii: ".")]
}

/// Where ``PackedForm`` rebuilds a body: gathered into an array, or compared with the body it must equal.
private protocol RebuiltBody {
    mutating func reserve(_ count: Int)
    mutating func append(_ bytes: ArraySlice<UInt8>)
    /// `bytes` in base64url.
    mutating func append(encoding bytes: ArraySlice<UInt8>)
}

/// A rebuilt body gathered into an array.
private struct BodyBytes: RebuiltBody {
    var bytes: [UInt8] = []

    mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }
    mutating func append(_ more: ArraySlice<UInt8>) { bytes += more }
    mutating func append(encoding more: ArraySlice<UInt8>) { bytes += Base64URL.encodedBytes(more) }
}

/// A rebuilt body compared with `expected` as it comes: no copy of the body is made.
private struct BodyComparison: RebuiltBody {
    let expected: UnsafeBufferPointer<UInt8>
    /// How much of `expected` the rebuilt bytes covered so far.
    var position = 0
    /// Whether every rebuilt byte so far equals `expected`'s.
    var matches = true

    mutating func reserve(_ count: Int) {}

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard matches, let next = take(bytes.count) else { return }
        matches = bytes.withUnsafeBufferPointer { next.hasSameBytes(as: $0) }
    }

    mutating func append(encoding bytes: ArraySlice<UInt8>) {
        guard matches, let next = take(Base64URL.encodedCount(bytes.count)) else { return }
        matches = bytes.withUnsafeBufferPointer { Base64URL.isEncoding(of: $0, next) }
    }

    /// The next `count` bytes of `expected`; nil, and no match, when fewer are left.
    private mutating func take(_ count: Int) -> UnsafeBufferPointer<UInt8>? {
        guard position + count <= expected.count else {
            matches = false
            return nil
        }
        defer { position += count }
        return UnsafeBufferPointer(rebasing: expected[position..<(position + count)])
    }
}
