import AppStoreModels
import AppStoreTestSupport
import Foundation
import Testing

@Suite("Forward compatibility: Apple's new values and fields never fail decoding", .tags(.fast))
struct ForwardCompatibilityTests {
    @Test("unknown notification types and subtypes keep their raw strings")
    func unknownStringValues() throws {
        let json =
            #"{"notificationType":"SOME_FUTURE_TYPE","subtype":"SOME_FUTURE_SUBTYPE","notificationUUID":"u","signedDate":1}"#
        let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(json.utf8))
        #expect(payload.notificationType?.rawValue == "SOME_FUTURE_TYPE")
        #expect(payload.subtype?.rawValue == "SOME_FUTURE_SUBTYPE")
        #expect(payload.notificationType != .subscribed)
        #expect(payload.content == .unknown)
    }

    @Test("unknown integer values (offer type, revocation reason, status) keep their raw integers")
    func unknownIntValues() throws {
        let json =
            #"{"offerType":9,"revocationReason":7,"type":"Some New Product Kind","inAppOwnershipType":"BORROWED"}"#
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        #expect(transaction.offerType?.rawValue == 9)
        #expect(transaction.revocationReason?.rawValue == 7)
        #expect(transaction.type?.rawValue == "Some New Product Kind")
        #expect(transaction.inAppOwnershipType?.rawValue == "BORROWED")

        let data = try JSONDecoder().decode(
            NotificationData.self,
            from: Data(#"{"status":42,"environment":"Moon"}"#.utf8)
        )
        #expect(data.status?.rawValue == 42)
        #expect(data.environment?.rawValue == "Moon")
    }

    @Test("unknown fields are ignored at every level")
    func unknownFieldsIgnored() throws {
        let json = #"""
            {"notificationType":"DID_RENEW","brandNewField":{"nested":[1,2,3]},
             "data":{"bundleId":"com.example","environment":"Sandbox","newDataField":true}}
            """#
        let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(json.utf8))
        #expect(payload.notificationType == .didRenew)
        #expect(payload.data?.bundleId == "com.example")
        #expect(payload.data?.environment == .sandbox)
    }

    @Test("known values compare equal to their constants and re-encode to Apple's exact strings")
    func roundTrip() throws {
        let transaction = JWSTransactionDecodedPayload(
            type: .autoRenewableSubscription,
            offerType: .winBackOffer,
            environment: .localTesting,
            offerDiscountType: "SOME_FUTURE_DISCOUNT"
        )
        let encoded = try JSONEncoder().encode(transaction)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["type"] as? String == "Auto-Renewable Subscription")
        #expect(object["offerType"] as? Int == 4)
        #expect(object["environment"] as? String == "LocalTesting")
        #expect(object["offerDiscountType"] as? String == "SOME_FUTURE_DISCOUNT")
        #expect(try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: encoded) == transaction)
    }

    @Test("a payload's content is the member Apple's libraries would pick")
    func contentSelection() throws {
        let summary = ResponseBodyV2DecodedPayload(summary: NotificationSummary(requestIdentifier: "r"))
        #expect(summary.content == .summary(NotificationSummary(requestIdentifier: "r")))
        let token = ExternalPurchaseToken(externalPurchaseId: "SANDBOX_1")
        #expect(token.inferredEnvironment == .sandbox)
        #expect(ExternalPurchaseToken(externalPurchaseId: "abc").inferredEnvironment == .production)
    }
}

@Suite("Newer members Apple documents", .tags(.fast))
struct NewerMembersTests {
    @Test("commitment billing and Advanced Commerce details decode; the Advanced Commerce tree round-trips verbatim")
    func commitmentAndAdvancedCommerce() throws {
        let json = #"""
            {"billingPlanType":"MONTHLY","commitmentInfo":{"billingPeriodNumber":3,"totalBillingPeriods":12,
             "commitmentPrice":119880,"commitmentExpiresDate":1800000000000},
             "advancedCommerceInfo":{"requestReferenceId":"r-1","estimatedTax":120,"taxRate":"0.0825",
             "items":[{"SKU":"sku.a","price":4990,"details":{"nested":[true,null,1.5]}}]}}
            """#
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo?.billingPeriodNumber == 3)
        #expect(transaction.commitmentInfo?.commitmentPrice == 119_880)
        guard case .object(let info)? = transaction.advancedCommerceInfo else {
            Issue.record("advancedCommerceInfo should decode as an object")
            return
        }
        #expect(info["requestReferenceId"] == .string("r-1"))
        #expect(info["estimatedTax"] == .integer(120))
        let reencoded = try JSONDecoder().decode(
            JWSTransactionDecodedPayload.self,
            from: try JSONEncoder().encode(transaction)
        )
        #expect(reencoded == transaction)

        let renewal = try JSONDecoder().decode(
            JWSRenewalInfoDecodedPayload.self,
            from: Data(
                #"{"renewalBillingPlanType":"BILLED_UPFRONT","commitmentInfo":{"commitmentAutoRenewStatus":0,"commitmentRenewalBillingPlanType":"SOMETHING_NEW"}}"#
                    .utf8
            )
        )
        #expect(renewal.renewalBillingPlanType == .billedUpfront)
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus == .off)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType?.rawValue == "SOMETHING_NEW")
    }
}

@Suite("JSONValue keeps what Apple sent", .tags(.fast))
struct JSONValueTests {
    @Test("numbers stay numbers (1 is not true), integers stay exact, and the value round-trips")
    func exactValues() throws {
        let json = #"[1, 0, true, false, 2.5, 9007199254740993, -3, "1", null, {"a": [{}]}]"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        #expect(
            value
                == .array([
                    .integer(1), .integer(0), .bool(true), .bool(false), .number(2.5), .integer(9_007_199_254_740_993),
                    .integer(-3), .string("1"), .null, .object(["a": .array([.object([:])])]),
                ])
        )
        #expect(try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(value)) == value)
    }
}
