/// An error of the ingress: a code to match on, a reason for people, and context.
public struct IngressError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A setting is missing or invalid; the reason names it.
        public static let invalidConfiguration = Code(rawValue: "INVALID_CONFIGURATION")
        /// The server could not listen on its address.
        public static let bindFailed = Code(rawValue: "BIND_FAILED")
    }

    public var code: Code
    public var reason: String
    public var context: [String: String]

    public init(code: Code, reason: String, context: [String: String] = [:]) {
        self.code = code
        self.reason = reason
        self.context = context
    }

    public var description: String {
        let details = context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(code): \(reason)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
    }
}
