import Foundation
import Hummingbird
import Synchronization

/// An OpenTelemetry collector's OTLP/HTTP traces endpoint (`POST /v1/traces`, `http/json`) on 127.0.0.1, keeping
/// every span it is sent: what the tracing tests read a role's exported spans from.
package final class OTLPTestCollector: Sendable {
    /// A span as exported, its ids in lowercase hex (W3C's form).
    package struct Span: Sendable, Hashable {
        package var traceID: String
        package var spanID: String
        /// Empty for a root span.
        package var parentSpanID: String
        package var name: String
        /// OTLP's kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
        package var kind: Int
        /// String, integer and boolean attributes, as text.
        package var attributes: [String: String]
        /// OTLP's status code: 0 unset, 1 ok, 2 error.
        package var statusCode: Int
        /// `service.name` of the resource it came with.
        package var serviceName: String?
    }

    private let received = Mutex<[Span]>([])
    /// Exports that could not be read (each one's reason): a test expects none.
    private let unreadable = Mutex<[String]>([])

    package init() {}

    package var spans: [Span] { received.withLock { $0 } }
    package var unreadableExports: [String] { unreadable.withLock { $0 } }

    /// Serves the endpoint while `body` runs, `body` getting its URL.
    package func serve<Result: Sendable>(_ body: (_ url: String) async throws -> Result) async throws -> Result {
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 16 << 20)
            do {
                let spans = try Self.spans(fromJSON: Data(bytes.readableBytesView))
                self.received.withLock { $0 += spans }
            } catch {
                self.unreadable.withLock { $0.append("\(error)") }
                return Response(status: .badRequest)
            }
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "{}"))
            )
        }
        return try await LoopbackServer.serve(router, label: "test.otlp-collector") { port in
            try await body("http://127.0.0.1:\(port)/v1/traces")
        }
    }

    private struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The spans of an `ExportTraceServiceRequest` in OTLP's JSON encoding. Ids may come as OTLP's hex or as
    /// protobuf JSON's base64 (some exporters send either).
    static func spans(fromJSON data: Data) throws -> [Span] {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Unreadable(description: "not a JSON object")
        }
        var spans: [Span] = []
        for resourceSpans in root["resourceSpans"] as? [[String: Any]] ?? [] {
            let resource = resourceSpans["resource"] as? [String: Any]
            let serviceName = attributes(resource?["attributes"])["service.name"]
            for scopeSpans in resourceSpans["scopeSpans"] as? [[String: Any]] ?? [] {
                for span in scopeSpans["spans"] as? [[String: Any]] ?? [] {
                    guard let traceID = hex(span["traceId"]), let spanID = hex(span["spanId"]) else {
                        throw Unreadable(description: "a span without ids: \(span)")
                    }
                    spans.append(
                        Span(
                            traceID: traceID,
                            spanID: spanID,
                            parentSpanID: hex(span["parentSpanId"]) ?? "",
                            name: span["name"] as? String ?? "",
                            kind: integer(span["kind"]) ?? 0,
                            attributes: attributes(span["attributes"]),
                            statusCode: integer((span["status"] as? [String: Any])?["code"]) ?? 0,
                            serviceName: serviceName
                        )
                    )
                }
            }
        }
        return spans
    }

    private static func attributes(_ list: Any?) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in list as? [[String: Any]] ?? [] {
            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any] else {
                continue
            }
            if let text = value["stringValue"] as? String {
                result[key] = text
            } else if let number = integer(value["intValue"]) {
                result[key] = String(number)
            } else if let flag = value["boolValue"] as? Bool {
                result[key] = String(flag)
            }
        }
        return result
    }

    /// An integer sent as a JSON number or, as protobuf JSON writes 64-bit ones, a string.
    private static func integer(_ value: Any?) -> Int? {
        if let number = value as? Int { return number }
        if let text = value as? String { return Int(text) }
        return nil
    }

    private static func hex(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty else { return nil }
        let hexDigits = CharacterSet(charactersIn: "0123456789abcdefABCDEF")
        if text.count % 2 == 0, text.unicodeScalars.allSatisfy(hexDigits.contains), text.count == 32 || text.count == 16
        {
            return text.lowercased()
        }
        guard let bytes = Data(base64Encoded: text) else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}
