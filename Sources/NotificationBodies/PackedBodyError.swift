/// A stored body that cannot be rebuilt: its bytes are corrupt, of a format this program does not know, or refer to
/// a JWS header that was not supplied.
///
/// None of these is retriable: the same bytes give the same failure. ``description`` names the code and where the
/// form broke, never the body's content.
package struct PackedBodyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, machine-readable.
    package var code: Code
    /// A human explanation, safe to log.
    package var reason: String

    /// Creates an error; keep notification data out of `reason`.
    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `CODE: reason`; safe to log.
    package var description: String { "\(code.rawValue): \(reason)" }
}

extension PackedBodyError {
    /// A stored-body failure code.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `TRUNCATED`.
        package var description: String { rawValue }

        /// The form ends before a length, digest or run of bytes it announces (or is empty).
        case truncated = "TRUNCATED"
        /// The first byte names a format this program does not know (a newer writer, or corruption).
        case unknownFormat = "UNKNOWN_FORMAT"
        /// The form is not well made: a length too large to be real, or bytes after its end.
        case malformed = "MALFORMED"
        /// The form refers to a JWS header that the caller did not supply.
        case missingHeader = "MISSING_HEADER"
        /// A supplied header does not have the digest it was asked for (a damaged header table).
        case headerMismatch = "HEADER_MISMATCH"
    }
}
