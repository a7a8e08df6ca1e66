/// A verification policy configured in a way that cannot work: ``code`` says what, ``reason`` names the setting.
public struct VerificationConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the configuration.
    ///
    /// A closed set: the static members below are every code this library produces (a later release may add some).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case missingBundleID = "MISSING_BUNDLE_ID"
            case missingAppAppleID = "MISSING_APP_APPLE_ID"
        }

        private var backing: Backing

        private init(_ backing: Backing) {
            self.backing = backing
        }

        /// The code's name, for example `MISSING_BUNDLE_ID`.
        public var rawValue: String { backing.rawValue }

        /// The ``rawValue``.
        public var description: String { rawValue }

        /// The bundle id is empty.
        public static let missingBundleID = Code(.missingBundleID)
        /// The Production environment needs the app's Apple id (`appAppleId`), as Apple's rules do.
        public static let missingAppAppleID = Code(.missingAppAppleID)
    }

    /// What is wrong, machine-readable.
    public var code: Code
    /// A human explanation naming the setting.
    public var reason: String

    /// Creates an error.
    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `CODE: reason`.
    public var description: String { "\(code): \(reason)" }
}
