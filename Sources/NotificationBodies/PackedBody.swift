import AppStoreModels

/// A notification body as stored: its JWS headers (an `x5c` chain of about 2.6 KB, repeated in the outer JWS and in
/// each signed value inside it) replaced by references to a table that holds each distinct header once, or the body
/// verbatim when it cannot be packed exactly.
///
/// The raw body is the only cryptographic proof kept, so ``unpack(_:headers:)`` must give it back byte for byte: the
/// packer keeps a packed form only after rebuilding the body from it. It tries ``Format/packedV2`` (payloads and
/// signatures decoded), then ``Format/packedV1`` (which keeps the inner ones and the outer signature as text, so a
/// non-canonical one does not matter), then verbatim (a body that is not a JWS, an outer payload with padding or
/// non-zero spare bits, anything unexpected).
package struct PackedBody: Sendable, Hashable {
    /// The stored bytes (for a `bytea` column): the ``Format`` byte, then the body verbatim or its packed form.
    package var bytes: [UInt8]
    /// The JWS headers the packed form refers to, base64url text by digest; empty when verbatim.
    package var headers: [JWSHeaderDigest: [UInt8]]

    /// Packs `raw`: in the first packed format that rebuilds it exactly, newest first, otherwise verbatim.
    package init(packing raw: [UInt8]) {
        var decoded = DecodedNotificationJSON.KnownPayloads()
        self.init(packing: raw, formats: [.packedV2, .packedV1], decoded: &decoded)
    }

    /// Packs `raw` as ``init(packing:)`` does, adding the JWS payloads it decoded on the way to `decoded`: building
    /// the body's decoded JSON next need not decode them again.
    package init(packing raw: [UInt8], decoded: inout DecodedNotificationJSON.KnownPayloads) {
        self.init(packing: raw, formats: [.packedV2, .packedV1], decoded: &decoded)
    }

    /// Packs `raw` in `format` when that rebuilds it exactly, otherwise verbatim: for tests that need the forms an
    /// older program wrote, which readers must keep reading.
    package init(packing raw: [UInt8], format: Format) {
        var decoded = DecodedNotificationJSON.KnownPayloads()
        self.init(packing: raw, formats: format == .verbatim ? [] : [format], decoded: &decoded)
    }

    private init(packing raw: [UInt8], formats: [Format], decoded: inout DecodedNotificationJSON.KnownPayloads) {
        for format in formats {
            var headers: [JWSHeaderDigest: [UInt8]] = [:]
            guard let form = PackedForm(packing: raw, format: format, headers: &headers, decoded: &decoded) else {
                continue
            }
            let bytes = form.encoded()
            // The check that makes packing safe: whatever the scan guessed, only an exact rebuild of the stored bytes
            // is kept. The headers are the texts just hashed, so they are not hashed again.
            if let stored = try? PackedForm(decoding: bytes), stored.rebuilds(raw, headers: { headers[$0] }) {
                self.bytes = bytes
                self.headers = headers
                return
            }
        }
        self.bytes = [Format.verbatim.rawValue] + raw
        self.headers = [:]
    }

    /// How ``bytes`` is laid out.
    package var format: Format { Format(rawValue: bytes.first ?? Format.verbatim.rawValue) }

    /// The digests of the headers `stored` refers to, each once: the headers to fetch before ``unpack(_:headers:)``.
    package static func referencedDigests(in stored: [UInt8]) throws(PackedBodyError) -> [JWSHeaderDigest] {
        switch try Format(of: stored) {
        case .verbatim: []
        default: try PackedForm(decoding: stored).digests
        }
    }

    /// The original body of `stored`, each header it refers to taken from `headers` and checked against its digest.
    package static func unpack(
        _ stored: [UInt8],
        headers: (JWSHeaderDigest) -> [UInt8]?
    ) throws(PackedBodyError) -> [UInt8] {
        switch try Format(of: stored) {
        case .verbatim: Array(stored.dropFirst())
        default: try PackedForm(decoding: stored).rebuilt(headers: headers)
        }
    }
}

extension PackedBody {
    /// The layout of a stored body, its first byte. A struct rather than an enum: later layouts will be added, and a
    /// reader meeting one it does not know reports ``PackedBodyError/Code/unknownFormat``.
    package struct Format: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The first byte of ``PackedBody/bytes``.
        package var rawValue: UInt8

        /// The format with this first byte, known to this program or not.
        package init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// The body as received.
        package static let verbatim = Format(rawValue: 0)
        /// Headers by reference, the outer payload decoded (``PackedForm``); the inner payloads and all signatures
        /// stay base64url text. Still read: bodies stored before ``packedV2``, and bodies it cannot hold.
        package static let packedV1 = Format(rawValue: 1)
        /// As ``packedV1``, with the inner payloads and all signatures decoded too (``PackedForm``).
        package static let packedV2 = Format(rawValue: 2)

        /// `verbatim`, `packed-v1`, `packed-v2` or `unknown-N`.
        package var description: String {
            switch self {
            case .verbatim: "verbatim"
            case .packedV1: "packed-v1"
            case .packedV2: "packed-v2"
            default: "unknown-\(rawValue)"
            }
        }

        /// The format of `stored`, throwing for an empty form or a format this program cannot read.
        init(of stored: [UInt8]) throws(PackedBodyError) {
            guard let first = stored.first else {
                throw PackedBodyError(code: .truncated, reason: "an empty form has no format byte")
            }
            self.init(rawValue: first)
            guard self == .verbatim || self == .packedV1 || self == .packedV2 else {
                throw PackedBodyError(
                    code: .unknownFormat,
                    reason: "format byte \(first) is not one this program reads"
                )
            }
        }
    }
}
