import AppStoreModels

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The headers of every message on the raw topic: what the receiver knew about a body it could not yet verify.
///
/// The ingress writes them for each request it accepts, the reconciler for each body it pulls from Apple's history;
/// workers read them to pick the verification policy (app and environment) and to keep the time of receipt.
/// Docs/ingress.md lists them as part of the contract.
public struct RawNotificationHeaders: Sendable, Hashable {
    /// Who put the body on the raw topic.
    public struct Source: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Apple posted it to the ingress.
        public static let ingress = Source(rawValue: "ingress")
        /// The reconciler pulled it from Apple's notification history.
        public static let history = Source(rawValue: "history")
        /// `asnp replay` put it back: a rejected notification or a raw-topic message, to be verified again.
        public static let replay = Source(rawValue: "replay")
    }

    /// Header names, all prefixed `asnp-`.
    public enum Name {
        public static let version = "asnp-version"
        public static let environment = "asnp-environment"
        public static let app = "asnp-app"
        public static let receivedAt = "asnp-received-at"
        public static let requestID = "asnp-request-id"
        public static let source = "asnp-source"
    }

    /// The notification format the body was sent as: 1 or 2 (from the route, not from the body).
    public var version: Int
    /// The environment the body was sent for (from the route), in Apple's spelling: `Production` or `Sandbox`.
    public var environment: AppStoreEnvironment
    /// The configured app the body was sent for.
    public var app: String
    /// When the receiver had the whole body.
    public var receivedAt: Date
    /// The receiver's id for the request, also in its logs and in the HTTP response (`X-Request-ID`).
    public var requestID: String
    /// Who put the body on the raw topic.
    public var source: Source

    public init(
        version: Int,
        environment: AppStoreEnvironment,
        app: String,
        receivedAt: Date,
        requestID: String,
        source: Source
    ) {
        self.version = version
        self.environment = environment
        self.app = app
        self.receivedAt = receivedAt
        self.requestID = requestID
        self.source = source
    }

    /// The headers in the order they are written.
    public var fields: [(name: String, value: String)] {
        [
            (Name.version, String(version)),
            (Name.environment, environment.rawValue),
            (Name.app, app),
            (Name.receivedAt, Self.format(receivedAt)),
            (Name.requestID, requestID),
            (Name.source, source.rawValue),
        ]
    }

    /// Reads the headers of a consumed message; throws naming the first header that is missing or invalid.
    public init(fields: [String: String]) throws(RawNotificationHeadersError) {
        func required(_ name: String) throws(RawNotificationHeadersError) -> String {
            guard let value = fields[name], !value.isEmpty else { throw RawNotificationHeadersError(header: name) }
            return value
        }
        guard let version = Int(try required(Name.version)), version == 1 || version == 2 else {
            throw RawNotificationHeadersError(header: Name.version, value: fields[Name.version])
        }
        guard let receivedAt = Self.parse(try required(Name.receivedAt)) else {
            throw RawNotificationHeadersError(header: Name.receivedAt, value: fields[Name.receivedAt])
        }
        self.init(
            version: version,
            environment: AppStoreEnvironment(rawValue: try required(Name.environment)),
            app: try required(Name.app),
            receivedAt: receivedAt,
            requestID: fields[Name.requestID] ?? "",
            source: Source(rawValue: fields[Name.source] ?? Source.ingress.rawValue)
        )
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-23T21:56:39.123Z`.
    static func format(_ date: Date) -> String {
        date.formatted(timestampStyle)
    }

    /// Reads RFC 3339 timestamps with or without fractional seconds.
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: timestampStyle) { return date }
        return try? Date(text, strategy: .iso8601)
    }

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

/// A consumed raw message whose headers are missing or invalid (not written by the ingress or the reconciler).
public struct RawNotificationHeadersError: Error, Hashable, CustomStringConvertible {
    /// The header that is missing or invalid.
    public var header: String
    /// Its value, when present.
    public var value: String?

    public init(header: String, value: String? = nil) {
        self.header = header
        self.value = value
    }

    public var description: String {
        if let value {
            "INVALID_HEADERS: header '\(header)' has an invalid value '\(value)'"
        } else {
            "INVALID_HEADERS: header '\(header)' is missing"
        }
    }
}
