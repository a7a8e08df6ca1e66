import AppStoreModels

extension PackedForm {
    /// The packed form of `raw` and the headers it refers to, or nil when `raw` holds no JWS string whose payload is
    /// base64url. Unchecked: ``PackedBody/init(packing:)`` keeps it only if it rebuilds `raw` exactly.
    init?(packing raw: [UInt8], headers: inout [JWSHeaderDigest: [UInt8]]) {
        guard
            let (outer, payload) = raw.withUnsafeBufferPointer({ text -> (JWSLiteral, [UInt8])? in
                guard let outer = JWSLiteral.find(in: text, limit: 1).first,
                    let payload = Base64URL.decode(UnsafeBufferPointer(rebasing: text[outer.payload]))
                else { return nil }
                return (outer, payload)
            })
        else { return nil }
        func reference(_ header: ArraySlice<UInt8>) -> JWSHeaderDigest {
            let digest = JWSHeaderDigest(of: header)
            if headers[digest] == nil { headers[digest] = Array(header) }
            return digest
        }
        // Only the inner headers go by reference; their payloads and signatures stay text within the literals.
        var pieces: [Piece] = []
        var position = 0
        for inner in payload.withUnsafeBufferPointer({ JWSLiteral.find(in: $0) }) {
            pieces.append(
                Piece(literal: payload[position..<inner.header.lowerBound], header: reference(payload[inner.header]))
            )
            position = inner.header.upperBound
        }
        self.init(
            prefix: raw[..<outer.header.lowerBound],
            header: reference(raw[outer.header]),
            pieces: pieces,
            tail: payload[position...],
            signature: raw[outer.signature],
            suffix: raw[outer.signature.upperBound...]
        )
    }
}
