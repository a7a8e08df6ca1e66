import AppStoreModels

extension PackedForm {
    /// The packed form of `raw` in `format` and the headers it refers to, or nil when `raw` holds no JWS string whose
    /// payload is base64url, or (format 2) when a payload or signature to store decoded is not canonical base64url.
    /// Unchecked: ``PackedBody/init(packing:)`` keeps it only if it rebuilds `raw` exactly. The payloads it decodes
    /// are added to `decoded`, whether it succeeds or not.
    init?(
        packing raw: [UInt8],
        format: PackedBody.Format,
        headers: inout [JWSHeaderDigest: [UInt8]],
        decoded: inout DecodedNotificationJSON.KnownPayloads
    ) {
        let decodesSegments = format == .packedV2
        // The first JWS string whose payload is base64url (a body has few strings: finding them all costs little).
        var found: (outer: JWSLiteral, payload: [UInt8])?
        let candidates = raw.withUnsafeBufferPointer {
            JWSLiteral.find(in: $0, isKnownHeader: JWSHeaderDigest.isRemembered)
        }
        for candidate in candidates {
            guard let payload = Self.decoded(raw[candidate.payload]) else {
                guard !candidate.hasBase64URLPayload(in: raw) else { return nil }
                continue
            }
            found = (candidate, payload)
            break
        }
        guard let (outer, payload) = found else { return nil }
        decoded.outer = (outer.header.lowerBound..<outer.signature.upperBound, payload)
        var signature = raw[outer.signature]
        if decodesSegments {
            guard let decoded = Self.decoded(signature) else { return nil }
            signature = decoded[...]
        }
        // The same header is usually in every JWS of a body: comparing its text is cheaper than hashing it again.
        var referenced: [(header: ArraySlice<UInt8>, digest: JWSHeaderDigest)] = []
        func reference(_ header: ArraySlice<UInt8>) -> JWSHeaderDigest {
            if let known = referenced.first(where: { $0.header.hasSameBytes(as: header) }) { return known.digest }
            let (digest, text) = JWSHeaderDigest.remembered(header)
            if headers[digest] == nil { headers[digest] = text }
            referenced.append((header, digest))
            return digest
        }
        // Format 1 takes only the inner headers out of the text, their payloads and signatures staying text within the
        // literals; format 2 takes each whole inner JWS, or gives up so that the caller can fall back to format 1.
        var pieces: [Piece] = []
        var position = 0
        let inners = payload.withUnsafeBufferPointer { text in
            raw[outer.header].withUnsafeBufferPointer { outerHeader in
                JWSLiteral.find(in: text) { $0.hasSameBytes(as: outerHeader) || JWSHeaderDigest.isRemembered($0) }
            }
        }
        for inner in inners {
            // A payload that is not base64url at all is not a JWS: its text stays in the next literal.
            var segments: DecodedSegments?
            if decodesSegments {
                guard let innerPayload = Self.decoded(payload[inner.payload]) else {
                    guard !inner.hasBase64URLPayload(in: payload) else { return nil }
                    continue
                }
                decoded.inner[inner.header.lowerBound..<inner.signature.upperBound] = innerPayload
                guard let innerSignature = Self.decoded(payload[inner.signature]) else { return nil }
                segments = DecodedSegments(payload: innerPayload[...], signature: innerSignature[...])
            } else if !inner.hasBase64URLPayload(in: payload) {
                continue
            }
            pieces.append(
                Piece(
                    literal: payload[position..<inner.header.lowerBound],
                    header: reference(payload[inner.header]),
                    segments: segments
                )
            )
            position = decodesSegments ? inner.signature.upperBound : inner.header.upperBound
        }
        self.init(
            format: format,
            prefix: raw[..<outer.header.lowerBound],
            header: reference(raw[outer.header]),
            pieces: pieces,
            tail: payload[position...],
            signature: signature,
            suffix: raw[outer.signature.upperBound...]
        )
    }

    /// `text` decoded, or nil unless it is canonical base64url (the only kind that re-encodes to the same text).
    private static func decoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        text.withUnsafeBufferPointer { Base64URL.decode($0) }
    }
}
