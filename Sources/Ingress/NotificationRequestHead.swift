import HTTPTypes

/// The fields of a notification request's head that the ingress acts on, read in one pass: `HTTPFields`' subscript
/// searches every field and joins repeated values for each name asked (four names cost 2% of the ingress's CPU).
/// Repeated fields read as that subscript reads them, their values joined with ", ".
struct NotificationRequestHead {
    /// `Connection` holds `close`: the sender wants the connection closed after the answer.
    var closes = false
    /// `Content-Length`, when it is one whole number.
    var declaredLength: Int?
    /// `Content-Type`.
    var contentType: String?
    /// `Expect: 100-continue`.
    var expectsContinue = false

    init(_ fields: HTTPFields) {
        var connection: String?
        var contentLength: String?
        var expect: String?
        func joined(_ existing: String?, _ value: String) -> String { existing.map { $0 + ", " + value } ?? value }
        for field in fields {
            switch field.name {
            case .connection: connection = joined(connection, field.value)
            case .contentLength: contentLength = joined(contentLength, field.value)
            case .contentType: contentType = joined(contentType, field.value)
            case .expect: expect = joined(expect, field.value)
            default: continue
            }
        }
        closes = connection?.lowercased().contains("close") ?? false
        declaredLength = contentLength.flatMap { Int($0) }
        expectsContinue = expect?.lowercased() == "100-continue"
    }
}
