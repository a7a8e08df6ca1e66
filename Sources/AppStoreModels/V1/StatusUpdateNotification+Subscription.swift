extension StatusUpdateNotification {
    /// The receipt entries of the notification's own subscription (``resolvedOriginalTransactionId``): those of
    /// `unified_receipt.latest_receipt_info` and the deprecated top-level objects.
    package var subscriptionReceiptEntries: [V1ReceiptInfo] {
        guard let id = resolvedOriginalTransactionId else { return [] }
        let entries =
            (unifiedReceipt?.latestReceiptInfo ?? []) + [latestReceiptInfo, latestExpiredReceiptInfo].compactMap { $0 }
        return entries.filter { $0.originalTransactionId == id }
    }

    /// The subscription's current purchase: its entry with the latest purchase date (then the latest expiry).
    package var currentReceiptEntry: V1ReceiptInfo? {
        subscriptionReceiptEntries.max { a, b in
            (a.purchaseDateMilliseconds ?? .min, a.expiresDateMilliseconds ?? .min)
                < (b.purchaseDateMilliseconds ?? .min, b.expiresDateMilliseconds ?? .min)
        }
    }

    /// The subscription's `pending_renewal_info` entry.
    package var subscriptionPendingRenewal: V1PendingRenewalInfo? {
        guard let id = resolvedOriginalTransactionId else { return nil }
        return unifiedReceipt?.pendingRenewalInfo?.first { $0.originalTransactionId == id }
    }

    /// When the notification stands in its subscription's order, in milliseconds since 1970: V1 has no signed date,
    /// so the latest moment it reports. That is the latest of its entries' purchase and cancellation dates and
    /// the auto-renew status change date; and, when it says the subscription expired or is in billing retry, the
    /// current purchase's expiry (such a notification is sent at or after it). A later notification reports at
    /// least what an earlier one did, so this never runs backwards; equal ones are ordered by notification UUID.
    package var stateOrderMilliseconds: Int64? {
        let entries = subscriptionReceiptEntries
        var moments = entries.flatMap { [$0.purchaseDateMilliseconds, $0.cancellationDateMilliseconds] }
        moments += [Self.milliseconds(autoRenewStatusChangeDateMs), Self.milliseconds(cancellationDateMs)]
        let renewal = subscriptionPendingRenewal
        let lapsed =
            renewal?.isInBillingRetryPeriod == "1" || renewal?.expirationIntent != nil || expirationIntent != nil
        if lapsed { moments.append(currentReceiptEntry?.expiresDateMilliseconds) }
        return moments.compactMap { $0 }.max()
    }

    /// A V1 `_ms` string as milliseconds since 1970.
    static func milliseconds(_ text: String?) -> Int64? {
        text.flatMap { Int64($0) }
    }
}

extension V1ReceiptInfo {
    /// `purchase_date_ms` as a number.
    package var purchaseDateMilliseconds: Int64? { StatusUpdateNotification.milliseconds(purchaseDateMs) }
    /// `expires_date_ms` as a number.
    package var expiresDateMilliseconds: Int64? { StatusUpdateNotification.milliseconds(expiresDateMs) }
    /// `cancellation_date_ms` as a number: when Apple refunded or revoked the transaction.
    package var cancellationDateMilliseconds: Int64? { StatusUpdateNotification.milliseconds(cancellationDateMs) }
}
