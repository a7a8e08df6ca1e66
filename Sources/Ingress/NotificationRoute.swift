import HTTPTypes

/// A request for one of the notification routes, recognised from its method and path alone:
/// `POST [/{token}]/v{1,2}/notifications/{environment}[/{app}]`. Whether the token, environment and app are right
/// is ``NotificationReceiver``'s to say; any other request is the router's.
struct NotificationRoute {
    let version: Int
    /// The first segment when a path token is configured, as sent.
    let token: Substring?
    let environment: Substring
    let app: Substring?

    /// The route's label in `asnp_ingress_requests_total`, as the router names its routes.
    var label: String {
        Self.labels[(token == nil ? 0 : 4) + (version - 1) * 2 + (app == nil ? 0 : 1)]
    }

    /// The eight labels, built once: token or not, version 1 or 2, app or not.
    private static let labels: [String] = ["", "/{token}"].flatMap { token in
        [1, 2].flatMap { version in
            ["", "/{app}"].map { app in token + "/v\(version)/notifications/{environment}" + app }
        }
    }

    /// The route `request` asks for, or nil when it is not a notification route (`tokened`: whether the routes sit
    /// behind a path token).
    init?(_ request: HTTPRequest, tokened: Bool) {
        guard request.method == .post, let target = request.path else { return nil }
        // By UTF-8 code units: by characters, Swift would look for grapheme clusters in every path.
        let end = target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        self.init(path: target[..<end], tokened: tokened)
    }

    /// The notification route a path (without its query) names, whatever the method; nil for any other path.
    init?(path: Substring, tokened: Bool) {
        var segments = path.utf8.split(separator: UInt8(ascii: "/")).map(Substring.init)[...]
        if tokened {
            guard segments.count >= 4 else { return nil }
            token = segments.removeFirst()
        } else {
            token = nil
        }
        guard (3...4).contains(segments.count), segments.dropFirst().first == "notifications" else { return nil }
        switch segments.first {
        case "v1": version = 1
        case "v2": version = 2
        default: return nil
        }
        environment = segments[segments.startIndex + 2]
        app = segments.count == 4 ? segments.last : nil
    }
}
