import AppStoreTestSupport
import Foundation
import Ingress
import Testing

/// What a connection sees of the notification requests answered on the event loop beside Hummingbird's router:
/// answers in the order asked, keep-alive after a refusal, `Expect: 100-continue`, `Connection: close`.
@Suite("Ingress connections: pipelining, refusals, Expect and Connection headers", .tags(.pipeline))
struct IngressConnectionTests {
    static let body = #"{"signedPayload":"x"}"#

    static func post(_ path: String, body: String = body, headers: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(headers)"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func get(_ path: String, headers: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n"
    }

    /// Sends `requests` at once on one connection (the last should ask for `Connection: close`) and returns the
    /// answers' heads in the order received, each lowercased, and whether the server closed the connection.
    static func exchange(_ requests: [String], port: Int) async throws -> (heads: [String], closed: Bool) {
        let outcome = try await RawConnection.run { () throws -> (data: String, closed: Bool) in
            let connection = try RawConnection(port: port)
            guard connection.send(requests.joined()) else { throw RawConnectionError("the server closed at once") }
            // Bounded by the harness's acknowledgement timeout: every request is answered well before it.
            return connection.readUntilClosed(timeout: IngressHarness.acknowledgementTimeout * 2)
        }
        let heads = outcome.data.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
            ($0.components(separatedBy: "\r\n\r\n").first ?? $0).lowercased()
        }
        return (heads, outcome.closed)
    }

    @Test("Pipelined notifications and requests the router answers are answered in the order asked, on one connection")
    func pipelined() async throws {
        try await IngressHarness.with { ingress in
            let (heads, closed) = try await Self.exchange(
                [
                    Self.post("/v2/notifications/sandbox"), Self.get("/nowhere"),
                    Self.post("/v2/notifications/sandbox"), Self.get("/nowhere", headers: "Connection: close\r\n"),
                ],
                port: ingress.port
            )
            #expect(heads.map { String($0.prefix(4)) } == ["200 ", "404 ", "200 ", "404 "], "\(heads)")
            // The notifications' answers carry their request id; the router's answers do not.
            #expect(heads.map { $0.contains("x-request-id:") } == [true, false, true, false], "\(heads)")
            #expect(closed)
            #expect(try await ingress.consume(count: 2).count == 2)
        }
    }

    @Test("A notification refused at its head leaves the connection open for the next; Connection: close is honoured")
    func refusalKeepsConnection() async throws {
        try await IngressHarness.with { ingress in
            let (heads, closed) = try await Self.exchange(
                [
                    Self.post("/v2/notifications/staging"), Self.post("/v2/notifications/sandbox/other-app"),
                    Self.post("/v2/notifications/sandbox", headers: "Connection: close\r\n"),
                ],
                port: ingress.port
            )
            #expect(heads.map { String($0.prefix(4)) } == ["404 ", "404 ", "200 "], "\(heads)")
            #expect(heads.last?.contains("connection: close") == true, "\(heads)")
            #expect(closed)
            #expect(try await ingress.consume(count: 1).count == 1)
        }
    }

    @Test("Expect: 100-continue gets 100 Continue before the answer; a body over the limit gets 413 and a close")
    func expectContinueAndOversize() async throws {
        try await IngressHarness.with(configure: { $0.maximumBodySize = 1_024 }) { ingress in
            let (heads, closed) = try await Self.exchange(
                [
                    Self.post("/v2/notifications/sandbox", headers: "Expect: 100-continue\r\n"),
                    // Declared larger than the limit: answered at once, its body never read.
                    Self.post("/v2/notifications/sandbox", body: String(repeating: "a", count: 2_048)),
                ],
                port: ingress.port
            )
            #expect(heads.map { String($0.prefix(4)) } == ["100 ", "200 ", "413 "], "\(heads)")
            #expect(heads.last?.contains("connection: close") == true, "\(heads)")
            #expect(closed)
            #expect(try await ingress.consume(count: 1).count == 1)
        }
    }
}
