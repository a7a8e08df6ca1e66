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
package struct RawNotificationHeaders: Sendable, Hashable {
    /// Who put the body on the raw topic.
    package struct Source: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// Apple posted it to the ingress.
        package static let ingress = Source(rawValue: "ingress")
        /// The reconciler pulled it from Apple's notification history.
        package static let history = Source(rawValue: "history")
        /// `asnp replay` put it back: a rejected notification or a raw-topic message, to be verified again.
        package static let replay = Source(rawValue: "replay")

        /// Every source the pipeline writes; Docs/ingress.md and Docs/contract/asyncapi.yaml list the same.
        package static let all: [Source] = [.ingress, .history, .replay]
    }

    /// Header names, all prefixed `asnp-`.
    package enum Name {
        package static let version = "asnp-version"
        package static let environment = "asnp-environment"
        package static let app = "asnp-app"
        package static let receivedAt = "asnp-received-at"
        package static let requestID = "asnp-request-id"
        package static let source = "asnp-source"
    }

    /// The notification format the body was sent as: 1 or 2 (from the route, not from the body).
    package var version: Int
    /// The environment the body was sent for (from the route), in Apple's spelling: `Production` or `Sandbox`.
    package var environment: AppStoreEnvironment
    /// The configured app the body was sent for.
    package var app: String
    /// When the receiver had the whole body.
    package var receivedAt: Date
    /// The receiver's id for the request, also in its logs and in the HTTP response (`X-Request-ID`).
    package var requestID: String
    /// Who put the body on the raw topic.
    package var source: Source

    package init(
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
    package var fields: [(name: String, value: String)] {
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
    package init(fields: [String: String]) throws(RawNotificationHeadersError) {
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
        RFC3339Timestamp.string(from: date)
    }

    /// Reads RFC 3339 timestamps with or without fractional seconds; the form ``format(_:)`` writes without
    /// Foundation's parser, which costs microseconds.
    static func parse(_ text: String) -> Date? {
        if let date = RFC3339Timestamp.date(from: text) { return date }
        if let date = try? Date(text, strategy: timestampStyle) { return date }
        return try? Date(text, strategy: .iso8601)
    }

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}

/// A consumed raw message whose headers are missing or invalid (not written by the ingress or the reconciler).
package struct RawNotificationHeadersError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, as a stable identifier: the worker's rejection status for such a message.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, `INVALID_HEADERS`.
        package var description: String { rawValue }

        /// A header is missing or has an invalid value.
        case invalidHeaders = "INVALID_HEADERS"
    }

    /// What went wrong, machine-readable.
    package var code: Code { .invalidHeaders }
    /// The header that is missing or invalid.
    package var header: String
    /// Its value, when present.
    package var value: String?

    package init(header: String, value: String? = nil) {
        self.header = header
        self.value = value
    }

    /// A human explanation naming the header.
    package var reason: String {
        if let value {
            "header '\(header)' has an invalid value '\(value)'"
        } else {
            "header '\(header)' is missing"
        }
    }

    /// `INVALID_HEADERS: reason`.
    package var description: String { "\(code): \(reason)" }
}
