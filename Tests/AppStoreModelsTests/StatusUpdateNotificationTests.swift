import AppStoreModels
import AppStoreTestSupport
import Foundation
import Testing

@Suite("V1 statusUpdateNotification decoding", .tags(.fast))
struct StatusUpdateNotificationTests {
    @Test("snake_case fields decode and the original transaction id falls back to the receipt info")
    func decodesAndResolves() throws {
        let json = #"""
            {"environment":"PROD","notification_type":"DID_RENEW","password":"s","bid":"com.example",
             "auto_renew_status":"true","unified_receipt":{"status":0,"environment":"Production",
             "latest_receipt_info":[{"original_transaction_id":"42","expires_date_ms":"1700000000000",
             "is_trial_period":"false"}],"pending_renewal_info":[{"auto_renew_status":"1","product_id":"p"}]}}
            """#
        let notification = try JSONDecoder().decode(StatusUpdateNotification.self, from: Data(json.utf8))
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.originalTransactionId == nil)
        #expect(notification.resolvedOriginalTransactionId == "42")
        #expect(notification.resolvedEnvironment == .production)
        #expect(notification.unifiedReceipt?.latestReceiptInfo?.first?.expiresDateMs == "1700000000000")
        #expect(notification.unifiedReceipt?.pendingRenewalInfo?.first?.productId == "p")
        #expect(notification.unifiedReceipt?.status == 0)
    }

    @Test("the top-level original_transaction_id wins over the receipt's")
    func topLevelWins() throws {
        let json = #"{"original_transaction_id":"1","latest_receipt_info":{"original_transaction_id":"2"}}"#
        let notification = try JSONDecoder().decode(StatusUpdateNotification.self, from: Data(json.utf8))
        #expect(notification.resolvedOriginalTransactionId == "1")
        #expect(notification.resolvedEnvironment == nil)
    }

    @Test("the history response decodes its pages")
    func historyResponse() throws {
        let json = #"""
            {"notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[{"attemptDate":1,"sendAttemptResult":"TIMED_OUT"}]}],
             "hasMore":true,"paginationToken":"t"}
            """#
        let page = try JSONDecoder().decode(NotificationHistoryResponse.self, from: Data(json.utf8))
        #expect(page.hasMore == true)
        #expect(page.paginationToken == "t")
        #expect(page.notificationHistory?.first?.sendAttempts?.first?.sendAttemptResult == .timedOut)
    }
}
