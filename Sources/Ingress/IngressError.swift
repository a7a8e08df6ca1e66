/// An error of the ingress: a code to match on, a reason for people, and context.
package struct IngressError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// A setting is missing or invalid; the reason names it.
        package static let invalidConfiguration = Code(rawValue: "INVALID_CONFIGURATION")
        /// The server could not listen on its address.
        package static let bindFailed = Code(rawValue: "BIND_FAILED")
    }

    package var code: Code
    package var reason: String
    package var context: [String: String]

    package init(code: Code, reason: String, context: [String: String] = [:]) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    package var description: String {
        let details = context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(code): \(reason)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
    }
}
