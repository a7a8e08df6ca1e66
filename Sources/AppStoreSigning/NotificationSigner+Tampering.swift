extension NotificationSigner {
    /// The body with one character of its payload's signature changed (well inside it: the last character of a
    /// base64url signature partly encodes padding): verification must reject it.
    package static func tampered(_ body: String) -> String {
        guard let quote = body.lastIndex(of: "\""),
            let position = body.index(quote, offsetBy: -10, limitedBy: body.startIndex)
        else { return body + "x" }
        let replacement: Character = body[position] == "A" ? "Q" : "A"
        var tampered = body
        tampered.replaceSubrange(position...position, with: String(replacement))
        return tampered
    }
}
