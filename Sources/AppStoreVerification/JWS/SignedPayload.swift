import AppStoreModels

/// A payload whose signing date decides at which moment its certificate chain must be valid.
protocol SignedPayload: Decodable {
    /// Milliseconds since 1970; nil when the payload carries none (then "now" is used, as Apple's libraries do).
    var effectiveSignedDate: Int64? { get }
}

extension ResponseBodyV2DecodedPayload: SignedPayload {
    var effectiveSignedDate: Int64? { signedDate }
}

extension JWSTransactionDecodedPayload: SignedPayload {
    var effectiveSignedDate: Int64? { signedDate }
}

extension JWSRenewalInfoDecodedPayload: SignedPayload {
    var effectiveSignedDate: Int64? { signedDate }
}

extension AppTransaction: SignedPayload {
    var effectiveSignedDate: Int64? { signedDate ?? receiptCreationDate }
}

/// Just the dates that decide the validation time, for a payload that does not decode to its documented shape.
struct SignedDateProbe: SignedPayload {
    var signedDate: Int64?
    var receiptCreationDate: Int64?

    var effectiveSignedDate: Int64? { signedDate ?? receiptCreationDate }
}
