import AppStoreModels
import HTTPTypes
import PipelineContract

/// What a notification route names: the environment (`/production`, `/sandbox`) and the configured app (its name
/// as the last segment, or the only app when the segment is left out).
struct NotificationTarget: Sendable {
    let version: Int
    let environment: AppStoreEnvironment
    let app: PipelineApp

    /// Why the pipeline's configuration cannot verify a notification for this target, or nil: a Production V2 body
    /// needs the app's Apple id, a V1 body a shared secret. Such a body is refused (503, so Apple retries while an
    /// operator fixes the settings) rather than answered 200 and then stored as rejected for good.
    var unverifiableReason: String? {
        if version == 2, environment == .production, app.appAppleID == nil {
            return "app '\(app.name)' has no appAppleId, which Production notifications need "
                + "(apps.\(app.name).appAppleId)"
        }
        if version == 1, app.sharedSecrets.isEmpty {
            return "app '\(app.name)' has no shared secret to verify V1 notifications (apps.\(app.name).sharedSecrets)"
        }
        return nil
    }

    /// The route's environment segment in Apple's spelling, or nil for anything else.
    static func environment(forSegment segment: String) -> AppStoreEnvironment? {
        switch segment {
        case "production": .production
        case "sandbox": .sandbox
        default: nil
        }
    }
}

/// Resolves the route's environment and app; a route naming neither a valid environment nor a configured app is
/// answered 404 with what is wrong.
struct NotificationTargets: Sendable {
    let apps: [PipelineApp]
    private let appsByName: [String: PipelineApp]

    init(apps: [PipelineApp]) {
        self.apps = apps
        self.appsByName = Dictionary(apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func target(for route: NotificationRoute, requestID: String) throws(IngressRefusal) -> NotificationTarget {
        guard let environment = NotificationTarget.environment(forSegment: String(route.environment)) else {
            throw IngressRefusal(.notFound, "the environment must be production or sandbox", requestID: requestID)
        }
        if let name = route.app.map(String.init) {
            guard let app = appsByName[name] else {
                throw IngressRefusal(.notFound, "no app named '\(name)' is configured", requestID: requestID)
            }
            return NotificationTarget(version: route.version, environment: environment, app: app)
        }
        guard apps.count == 1 else {
            throw IngressRefusal(
                .notFound,
                "several apps are configured: add the app's name to the path",
                requestID: requestID
            )
        }
        return NotificationTarget(version: route.version, environment: environment, app: apps[0])
    }
}
