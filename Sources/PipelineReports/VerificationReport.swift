import AppStoreModels
import AppStoreVerification
import CommandSupport

/// The JSON object `asnp verify` prints for one body: a stable contract other tools and tests parse.
package struct VerificationReport {
    package var id: BatchInputID?
    package var result: NotificationVerificationResult

    package init(id: BatchInputID? = nil, result: NotificationVerificationResult) {
        self.id = id
        self.result = result
    }

    /// One line of JSON, keys in a fixed order.
    package var jsonLine: String {
        var object = OrderedJSONObject()
        if let id { object.append("id", .raw(id.json)) }
        object.append("status", .string(result.status))
        switch result {
        case .rejected(let error):
            object.append("reason", .string(error.reason))
        case .verified(let notification):
            let facts = NotificationFacts(notification)
            object.append("version", .int(Int64(notification.version)))
            switch notification {
            case .v1:
                object.append("notificationType", .optionalString(facts.notificationType))
                object.append("originalTransactionId", .optionalString(facts.originalTransactionId))
                object.append("environment", .optionalString(facts.environment))
            case .v2:
                object.append("notificationType", .optionalString(facts.notificationType))
                object.append("subtype", .optionalString(facts.subtype))
                object.append("notificationUUID", .optionalString(facts.notificationUUID))
                object.append("signedDate", .optionalInt(facts.signedDate))
                object.append("environment", .optionalString(facts.environment))
                object.append("originalTransactionId", .optionalString(facts.originalTransactionId))
                object.append("transactionId", .optionalString(facts.transactionId))
                object.append("productId", .optionalString(facts.productId))
                object.append("expiresDate", .optionalInt(facts.expiresDate))
                object.append("revocationDate", .optionalInt(facts.revocationDate))
                object.append("autoRenewStatus", .optionalInt(facts.autoRenewStatus.map(Int64.init)))
                object.append("requestIdentifier", .optionalString(facts.requestIdentifier))
                object.append("succeededCount", .optionalInt(facts.succeededCount))
                object.append("externalPurchaseId", .optionalString(facts.externalPurchaseId))
            }
        }
        return object.serialized
    }
}
