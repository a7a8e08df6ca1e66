/// PostgreSQL settings that cannot be used: a malformed database URL, an unknown `sslmode`, a TLS file that cannot be
/// read (``PostgresConfiguration``).
///
/// ``description`` names what is wrong but never the password; the TLS library's own words go to ``context``.
package struct PostgresConfigurationError: Error, Sendable, Hashable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, safe to log.
    package var reason: String
    /// Extra detail for debugging (the error reading a certificate or key file).
    package var context: String?

    /// Creates an error; keep secrets out of `reason`.
    package init(code: Code, reason: String, context: String? = nil) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    /// `CODE: reason`; safe to log.
    package var description: String { "\(code.rawValue): \(reason)" }

    /// The ``description`` followed by ``context`` in brackets, when there is one.
    package var debugDescription: String {
        guard let context else { return description }
        return "\(description) [\(context)]"
    }
}

extension PostgresConfigurationError {
    /// A settings failure code.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, `INVALID_CONFIGURATION`.
        package var description: String { rawValue }

        /// The settings are invalid (a malformed database URL, an unknown `sslmode`, a TLS file that cannot be read).
        case invalidConfiguration = "INVALID_CONFIGURATION"
    }
}
