extension StatusUpdateNotification {
    /// The original transaction identifier: from the top level, or else from the receipt information.
    package var resolvedOriginalTransactionId: String? {
        originalTransactionId
            ?? unifiedReceipt?.latestReceiptInfo?.first(where: { $0.originalTransactionId != nil })?
            .originalTransactionId
            ?? latestReceiptInfo?.originalTransactionId
            ?? latestExpiredReceiptInfo?.originalTransactionId
    }

    /// The environment in App Store Server API terms: V1's `PROD` is ``AppStoreEnvironment/production``.
    package var resolvedEnvironment: AppStoreEnvironment? {
        guard let environment else { return nil }
        return environment == "PROD" ? .production : AppStoreEnvironment(rawValue: environment)
    }
}
