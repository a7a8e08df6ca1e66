/// One app the pipeline receives notifications for: its name in routes and headers, and what verifies its bodies.
///
/// A pipeline may serve several apps; each gets its own ingress routes (`/v2/notifications/{environment}/{app}`)
/// and its own verification policy in the workers. With a single app, routes may leave the name out.
package struct PipelineApp: Sendable, Hashable, CustomStringConvertible {
    /// The name in routes, headers and metrics: lowercase letters, digits, `-` and `_`.
    package var name: String
    /// The app's bundle identifier, which V2 payloads must carry.
    package var bundleID: String
    /// The app's Apple ID (`appAppleId`); required by Apple's rules for production payloads.
    package var appAppleID: Int64?
    /// V1 shared secrets (`password`); several while one is rotated out. Never logged.
    package var sharedSecrets: [String]

    package init(name: String, bundleID: String, appAppleID: Int64? = nil, sharedSecrets: [String] = []) {
        self.name = name
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.sharedSecrets = sharedSecrets
    }

    /// Whether `name` can name an app: 1 to 64 of lowercase ASCII letters, digits, `-` and `_`.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Name, bundle id and app Apple id; the secrets only as a count.
    package var description: String {
        "\(name) (bundle id \(bundleID), app Apple id \(appAppleID.map(String.init) ?? "none"), "
            + "\(sharedSecrets.count) V1 shared secret(s))"
    }
}
