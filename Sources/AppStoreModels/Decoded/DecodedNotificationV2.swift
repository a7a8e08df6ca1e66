/// A V2 notification with every signed member decoded: the payload and the transaction, renewal and app
/// transaction it carries.
public struct DecodedNotificationV2: Sendable, Hashable, Codable {
    /// The decoded outer payload; its `signed…` strings are kept as Apple sent them.
    public var payload: ResponseBodyV2DecodedPayload
    /// The decoded `data.signedTransactionInfo`, when present.
    public var transactionInfo: JWSTransactionDecodedPayload?
    /// The decoded `data.signedRenewalInfo`, when present.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// The decoded `appData.signedAppTransactionInfo`, when present.
    public var appTransaction: AppTransaction?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    public init(
        payload: ResponseBodyV2DecodedPayload,
        transactionInfo: JWSTransactionDecodedPayload? = nil,
        renewalInfo: JWSRenewalInfoDecodedPayload? = nil,
        appTransaction: AppTransaction? = nil
    ) {
        self.payload = payload
        self.transactionInfo = transactionInfo
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
