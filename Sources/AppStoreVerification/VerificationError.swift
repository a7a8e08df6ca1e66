/// Why a notification or signed value was rejected.
///
/// ``code`` uses the vocabulary of Apple's `VerificationStatus` (plus `MALFORMED_BODY` and `INVALID_PASSWORD`), so
/// operators can compare verdicts with Apple's own libraries. ``description`` never contains secrets or customer
/// purchase data; the only payload values it names are a foreign bundle id or environment, quoted and bounded.
/// ``debugDescription`` adds the context.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The machine-readable failure, in Apple's vocabulary.
    public var code: Code
    /// A human explanation, safe to log.
    public var reason: String
    /// Extra detail for debugging (for example the certificate validator's own words); may name certificates.
    public var context: String?

    /// Creates an error; keep payload data and secrets out of `reason`.
    public init(code: Code, reason: String, context: String? = nil) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    /// Whether the same input may verify later (for example once an online check can be reached); permanent
    /// failures go to the dead-letter path at once.
    public var isRetriable: Bool { code == .retryableVerificationFailure }

    /// `CODE: reason`; safe to log.
    public var description: String { "\(code.rawValue): \(reason)" }

    /// The ``description`` followed by ``context`` in brackets, when there is one.
    public var debugDescription: String {
        guard let context else { return description }
        return "\(description) [\(context)]"
    }
}

extension VerificationError {
    /// A verification failure code, in the vocabulary of Apple's `VerificationStatus`.
    ///
    /// A closed set: the static members below are every code this library produces (a later release may add some).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case verificationFailure = "VERIFICATION_FAILURE"
            case invalidAppIdentifier = "INVALID_APP_IDENTIFIER"
            case invalidCertificate = "INVALID_CERTIFICATE"
            case invalidChainLength = "INVALID_CHAIN_LENGTH"
            case invalidChain = "INVALID_CHAIN"
            case invalidEnvironment = "INVALID_ENVIRONMENT"
            case retryableVerificationFailure = "RETRYABLE_VERIFICATION_FAILURE"
            case malformedBody = "MALFORMED_BODY"
            case invalidPassword = "INVALID_PASSWORD"
        }

        private var backing: Backing

        private init(_ backing: Backing) {
            self.backing = backing
        }

        /// The status as Apple's libraries spell it, for example `VERIFICATION_FAILURE`.
        public var rawValue: String { backing.rawValue }

        /// The ``rawValue``.
        public var description: String { rawValue }

        /// The signature, chain or payload did not verify, or the JWS could not be parsed.
        public static let verificationFailure = Code(.verificationFailure)
        /// The bundle identifier or app Apple identifier does not match the configured app.
        public static let invalidAppIdentifier = Code(.invalidAppIdentifier)
        /// A certificate in `x5c` could not be decoded, or no trusted root is configured.
        public static let invalidCertificate = Code(.invalidCertificate)
        /// `x5c` does not hold exactly three certificates.
        public static let invalidChainLength = Code(.invalidChainLength)
        /// The chain could not be built (kept for parity with Apple's vocabulary).
        public static let invalidChain = Code(.invalidChain)
        /// The environment does not match the configured one.
        public static let invalidEnvironment = Code(.invalidEnvironment)
        /// A transient failure; the same input may verify when retried.
        public static let retryableVerificationFailure = Code(.retryableVerificationFailure)
        /// The HTTP body is not a JSON object of the expected shape (for V2: no `signedPayload`).
        public static let malformedBody = Code(.malformedBody)
        /// A V1 notification's `password` is missing or matches no configured shared secret.
        public static let invalidPassword = Code(.invalidPassword)
    }
}

extension VerificationError {
    /// A value from a payload, fit for a reason: quoted, control characters replaced, at most 64 characters, so
    /// an unauthenticated value (Xcode, LocalTesting, V1) cannot forge or flood log lines.
    static func quoted(_ value: String?) -> String {
        guard let value else { return "(none)" }
        var text = String(
            value.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : Character($0) }
        )
        if value.unicodeScalars.count > 64 { text += "…" }
        return "'" + text + "'"
    }

    static func verificationFailure(_ reason: String, context: String? = nil) -> Self {
        Self(code: .verificationFailure, reason: reason, context: context)
    }

    static func malformedBody(_ reason: String, context: String? = nil) -> Self {
        Self(code: .malformedBody, reason: reason, context: context)
    }
}
