/// An error of the ingress: a code to match on, a reason for people, and context.
package struct IngressError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `BIND_FAILED`.
        package var description: String { rawValue }

        /// A setting is missing or invalid; the reason names it.
        case invalidConfiguration = "INVALID_CONFIGURATION"
        /// The server could not listen on its address.
        case bindFailed = "BIND_FAILED"
    }

    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, naming the setting or address.
    package var reason: String
    /// Named details (for example the address that could not be bound), printed in the description.
    package var context: [String: String]

    /// Creates an error.
    package init(code: Code, reason: String, context: [String: String] = [:]) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    /// `CODE: reason (key=value, ...)`, the context sorted by key.
    package var description: String {
        let details = context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(code): \(reason)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
    }
}
