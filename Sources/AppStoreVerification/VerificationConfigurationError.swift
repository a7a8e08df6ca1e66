/// A verifier was configured in a way that cannot work (no roots, unreadable certificate, missing app id).
public struct VerificationConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, naming the setting.
    public var message: String

    /// Creates an error with a message naming the setting.
    package init(_ message: String) {
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}
