extension StatusUpdateNotification {
    /// The original transaction identifier of the subscription the notification is about.
    ///
    /// The top-level `original_transaction_id`, else the deprecated `latest_receipt_info` (or
    /// `latest_expired_receipt_info`) object, which describes the notification's own subscription. Else the
    /// receipt's entries, which list the app's latest transactions across products and may belong to other
    /// subscriptions: only those of the notification's product (`auto_renew_product_id`, or the product of the
    /// deprecated object), the latest purchase first, or the only subscription the receipt holds. Nil when none of
    /// these names one.
    package var resolvedOriginalTransactionId: String? {
        if let id = nonEmpty(originalTransactionId) { return id }
        if let id = nonEmpty(
            latestReceiptInfo?.originalTransactionId ?? latestExpiredReceiptInfo?.originalTransactionId
        ) {
            return id
        }
        let products = Set(
            [autoRenewProductId, latestReceiptInfo?.productId, latestExpiredReceiptInfo?.productId].compactMap { $0 }
        )
        let entries = unifiedReceipt?.latestReceiptInfo ?? []
        if let entry = entries.filter({
            $0.productId.map(products.contains) == true && nonEmpty($0.originalTransactionId) != nil
        })
        .max(by: { ($0.purchaseDateMilliseconds ?? .min) < ($1.purchaseDateMilliseconds ?? .min) }) {
            return entry.originalTransactionId
        }
        let renewals = unifiedReceipt?.pendingRenewalInfo ?? []
        if let renewal = renewals.first(where: {
            [$0.autoRenewProductId, $0.productId].contains { $0.map(products.contains) == true }
                && nonEmpty($0.originalTransactionId) != nil
        }) {
            return renewal.originalTransactionId
        }
        let named = Set(
            (entries.map(\.originalTransactionId) + renewals.map(\.originalTransactionId)).compactMap { nonEmpty($0) }
        )
        return named.count == 1 ? named.first : nil
    }

    /// The environment in App Store Server API terms: V1's `PROD` is ``AppStoreEnvironment/production``.
    package var resolvedEnvironment: AppStoreEnvironment? {
        guard let environment else { return nil }
        return environment == "PROD" ? .production : AppStoreEnvironment(rawValue: environment)
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
