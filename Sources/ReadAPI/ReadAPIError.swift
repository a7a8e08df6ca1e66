/// An error of the read API's setup: its settings or its keys file. What a request did wrong is an ``APIProblem``,
/// answered to the client, never thrown.
package struct ReadAPIError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `INVALID_KEYS`.
        package var description: String { rawValue }

        /// A setting is missing or invalid; the reason names it.
        case invalidConfiguration = "INVALID_CONFIGURATION"
        /// The keys file cannot be read or holds an invalid entry; the reason names the entry by its id.
        case invalidKeys = "INVALID_KEYS"
    }

    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, naming the setting or the key entry; never a key or its hash.
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
