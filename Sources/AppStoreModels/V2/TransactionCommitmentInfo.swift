/// The commitment of a subscription billed monthly over a committed term (`commitmentInfo` of a transaction).
public struct TransactionCommitmentInfo: Sendable, Hashable, Codable {
    /// Which billing period of the commitment this transaction pays for.
    public var billingPeriodNumber: Int64?
    /// When the commitment ends, in milliseconds since 1970.
    public var commitmentExpiresDate: Int64?
    /// The price of the whole commitment, in milliunits of the transaction's currency.
    public var commitmentPrice: Int64?
    /// How many billing periods the commitment has.
    public var totalBillingPeriods: Int64?

    /// Creates a value; fields left out are absent, as when Apple omits them.
    package init(
        billingPeriodNumber: Int64? = nil,
        commitmentExpiresDate: Int64? = nil,
        commitmentPrice: Int64? = nil,
        totalBillingPeriods: Int64? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }
}
