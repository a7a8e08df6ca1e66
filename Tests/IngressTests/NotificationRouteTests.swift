import AppStoreTestSupport
import HTTPTypes
import Testing

@testable import Ingress

@Suite("Notification routes and the request head fields the ingress reads", .tags(.fast))
struct NotificationRouteTests {
    @Test("paths name a version, environment, app and token; the labels are the router's; anything else is no route")
    func routes() throws {
        let cases: [(path: String, tokened: Bool, label: String?, environment: String?, app: String?)] = [
            (
                "/v2/notifications/production/com.example", false, "/v2/notifications/{environment}/{app}",
                "production", "com.example"
            ),
            ("/v1/notifications/sandbox", false, "/v1/notifications/{environment}", "sandbox", nil),
            ("/v2/notifications/sandbox?x=1/2", false, "/v2/notifications/{environment}", "sandbox", nil),
            (
                "/t0k/v1/notifications/sandbox/app", true, "/{token}/v1/notifications/{environment}/{app}", "sandbox",
                "app"
            ),
            ("/t0k/v2/notifications/production", true, "/{token}/v2/notifications/{environment}", "production", nil),
            ("/v3/notifications/sandbox", false, nil, nil, nil),
            ("/v2/notification/sandbox", false, nil, nil, nil),
            ("/v2/notifications", false, nil, nil, nil),
            ("/v2/notifications/sandbox/app/extra", false, nil, nil, nil),
            ("/v2/notifications/sandbox", true, nil, nil, nil),
            ("/ü/v2/notifications/sändbox", true, "/{token}/v2/notifications/{environment}", "sändbox", nil),
        ]
        for (path, tokened, label, environment, app) in cases {
            let request = HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: path)
            let route = NotificationRoute(request, tokened: tokened)
            #expect(route?.label == label, "\(path)")
            #expect(route.map { String($0.environment) } == environment, "\(path)")
            #expect(route?.app.map(String.init) == app, "\(path)")
            #expect((route?.token != nil) == (tokened && route != nil), "\(path)")
        }
        let get = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/v2/notifications/sandbox")
        #expect(NotificationRoute(get, tokened: false) == nil)
    }

    @Test("the head's fields are read as HTTPFields' subscript reads them, repeated values joined")
    func headFields() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .connection, value: "keep-alive"))
        fields.append(HTTPField(name: .connection, value: "Close"))
        fields[.contentLength] = "12345"
        fields[.contentType] = "application/json"
        fields[.expect] = "100-Continue"
        let head = NotificationRequestHead(fields)
        #expect(head.closes)
        #expect(head.declaredLength == 12345)
        #expect(head.contentType == "application/json")
        #expect(head.expectsContinue)

        var repeated = HTTPFields()
        repeated.append(HTTPField(name: .contentLength, value: "1"))
        repeated.append(HTTPField(name: .contentLength, value: "1"))
        repeated.append(HTTPField(name: .contentType, value: "a"))
        repeated.append(HTTPField(name: .contentType, value: "b"))
        let other = NotificationRequestHead(repeated)
        #expect(other.declaredLength == nil && repeated[.contentLength] == "1, 1")
        #expect(other.contentType == repeated[.contentType])
        #expect(!other.closes && !other.expectsContinue)
        #expect(NotificationRequestHead(HTTPFields()).declaredLength == nil)
    }
}
