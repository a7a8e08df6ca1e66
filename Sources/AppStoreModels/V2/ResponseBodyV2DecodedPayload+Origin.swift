extension ResponseBodyV2DecodedPayload {
    /// The app and environment a notification is about, as its shape says them.
    package struct Origin: Sendable, Hashable {
        package var bundleId: String?
        package var appAppleId: Int64?
        package var environment: AppStoreEnvironment?
    }

    /// The app and environment from wherever this shape carries them, as Apple's libraries read them to verify a
    /// notification: `data`, `summary`, `appData`, or the `externalPurchaseToken` (its environment from the `SANDBOX`
    /// prefix of its id); all nil for a shape this version does not know.
    package var origin: Origin {
        switch content {
        case .data(let data):
            Origin(bundleId: data.bundleId, appAppleId: data.appAppleId, environment: data.environment)
        case .summary(let summary):
            Origin(bundleId: summary.bundleId, appAppleId: summary.appAppleId, environment: summary.environment)
        case .externalPurchaseToken(let token):
            Origin(bundleId: token.bundleId, appAppleId: token.appAppleId, environment: token.inferredEnvironment)
        case .appData(let appData):
            Origin(bundleId: appData.bundleId, appAppleId: appData.appAppleId, environment: appData.environment)
        case .unknown:
            Origin()
        }
    }
}
