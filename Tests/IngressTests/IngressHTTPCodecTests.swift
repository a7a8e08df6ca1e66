import AppStoreTestSupport
import HTTPTypes
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing

@testable import Ingress

@Suite("The ingress's HTTP types codec", .tags(.fast))
struct IngressHTTPCodecTests {
    @Test(
        "A request head converts exactly as swift-nio-extras converts it, whatever its target",
        arguments: [
            "/", "/v2/notifications/sandbox", "/v2/notifications/production/app?x=1&y=%20", "/a//b/", "/%zz",
            "/ünï", "//double/slash", "/?only=query", "/#fragment", "http://example.com/path?q=1", "http://h",
            "https://h:8443/p", "*", "example.com:443", "", "relative/path", "h:/p",
        ]
    )
    func sameAsTheLibrary(target: String) throws {
        for headers in [
            HTTPHeaders([("Host", "example.com"), ("Content-Type", "application/json"), ("Cookie", "a=1; b=2")]),
            HTTPHeaders([("host", "a"), ("Host", "b"), ("X-Forwarded-For", "10.0.0.1")]),
            HTTPHeaders(),
        ] {
            let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target, headers: headers)
            let ours = try IngressHTTPCodec.request(head)
            let library = try HTTPRequest(head, secure: false, splitCookie: false)
            #expect(ours == library, "\(target) with \(headers)")
            #expect(ours.path == library.path && ours.authority == library.authority)
        }
    }
}
