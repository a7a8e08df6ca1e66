/// An error of the ingress: a code to match on, a reason for people, and context.
package struct IngressError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `INVALID_CONFIGURATION`.
        package var description: String { rawValue }

        /// A setting is missing or invalid; the reason names it.
        case invalidConfiguration = "INVALID_CONFIGURATION"
    }

    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, naming the setting.
    package var reason: String
    /// Extra detail for debugging, when there is some.
    package var context: String?

    /// Creates an error.
    package init(code: Code, reason: String, context: String? = nil) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    /// `CODE: reason`, then the context in brackets when there is one.
    package var description: String {
        "\(code): \(reason)" + (context.map { " [\($0)]" } ?? "")
    }
}
