#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON of a verified notification as the pipeline stores it (`notifications.decoded`) and publishes it (the
/// decoded topic's value), built from the bytes Apple signed rather than by encoding models: every field Apple sent,
/// known to this version or not, with Apple's names and values, and the same bytes whenever it is built again from
/// the same body (an event republished from the outbox is identical to its first publication).
///
/// - V2: `{"payload":P,"transactionInfo":T,"renewalInfo":R,"appTransaction":A}`. P is the outer payload as signed,
///   without the JWS members this version verifies and decodes (``SignedMember``); T, R and A are those members'
///   payloads as signed, each present when its member was. Any other member, a signed one Apple adds later
///   included, stays in P as Apple sent it.
/// - V1: the body as stored (its `password` redacted), without a leading byte order mark.
///
/// It reads the body's JSON without validating what it does not rewrite: build only from bodies the verifier
/// accepted.
package enum DecodedNotificationJSON {
    /// A JWS member of the V2 payload that this version verifies, decoded under its own name.
    package enum SignedMember: String, CaseIterable, Sendable, Hashable {
        /// `data.signedTransactionInfo`.
        case transactionInfo
        /// `data.signedRenewalInfo`.
        case renewalInfo
        /// `appData.signedAppTransactionInfo`.
        case appTransaction

        /// The payload member holding it and its name there.
        var location: (object: String, member: String) {
            switch self {
            case .transactionInfo: ("data", "signedTransactionInfo")
            case .renewalInfo: ("data", "signedRenewalInfo")
            case .appTransaction: ("appData", "signedAppTransactionInfo")
            }
        }
    }

    /// Why a body's JSON cannot be built byte for byte.
    package struct Unbuildable: Error, Sendable, Hashable, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }

    /// Payloads of a V2 body's JWS that the caller has decoded already (the packer of stored bodies decodes them
    /// too), each by where its compact text lies: a member whose string holds exactly that text takes it instead of
    /// decoding again. The text there is the JWS as it stands, no escapes, so the JSON is the same either way.
    package struct KnownPayloads: Sendable {
        /// The outer JWS: where its compact text lies in the body, and its decoded payload.
        package var outer: (compact: Range<Int>, payload: [UInt8])?
        /// JWS inside the outer payload: where their compact text lies in ``outer``'s payload, and their payloads.
        package var inner: [Range<Int>: [UInt8]] = [:]

        /// None known.
        package init() {}
    }

    /// A V2 body's JSON, and which signed members it carries decoded; payloads in `known` are not decoded again.
    package static func v2(
        body: [UInt8],
        known: KnownPayloads = KnownPayloads()
    ) throws(Unbuildable) -> (json: [UInt8], decoded: Set<SignedMember>) {
        let signedPayload = try onlyString("signedPayload", of: body, what: "the body")
        let payload: [UInt8]
        let knownInner: [Range<Int>: [UInt8]]
        if let outer = known.outer, outer.compact == signedPayload.dropFirst().dropLast() {
            (payload, knownInner) = (outer.payload, known.inner)
        } else {
            payload = try jwsPayload(stringBytes(body[signedPayload], what: "signedPayload"), what: "signedPayload")
            knownInner = [:]
        }
        let objectStart = payload.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? payload.count
        var scanner = JSONMemberScanner(payload, objectAt: objectStart)
        var rewrites: [(range: Range<Int>, bytes: [UInt8])] = []
        var decoded: [SignedMember: [UInt8]] = [:]
        var seen: Set<String> = []
        while let member = scanner.next() {
            guard let name = member.name, ["data", "appData"].contains(name) else { continue }
            guard seen.insert(name).inserted else { throw Unbuildable(reason: "the payload has two '\(name)' members") }
            let signed = SignedMember.allCases.filter { $0.location.object == name }
            guard payload[member.value.lowerBound] == UInt8(ascii: "{"),
                let rewrite = try withoutSignedMembers(
                    signed,
                    in: payload,
                    object: member.value,
                    name: name,
                    known: knownInner
                )
            else { continue }
            rewrites.append((member.value, rewrite.object))
            decoded.merge(rewrite.decoded) { first, _ in first }
        }
        guard scanner.isClosed else { throw Unbuildable(reason: "the payload is not a JSON object") }

        var json: [UInt8] = []
        json.reserveCapacity(payload.count + decoded.values.reduce(64) { $0 + $1.count + 24 })
        json += #"{"payload":"#.utf8
        var copied = objectStart
        for rewrite in rewrites {
            json += payload[copied..<rewrite.range.lowerBound]
            json += rewrite.bytes
            copied = rewrite.range.upperBound
        }
        json += payload[copied..<scanner.position]
        for member in SignedMember.allCases {
            guard let bytes = decoded[member] else { continue }
            json += #","\#(member.rawValue)":"#.utf8
            json += bytes
        }
        json.append(UInt8(ascii: "}"))
        return (json, Set(decoded.keys))
    }

    /// A V1 body's JSON from the body as stored (password redacted).
    package static func v1(storedBody: [UInt8]) -> [UInt8] {
        // A byte order mark is not JSON (PostgreSQL's jsonb refuses it); decoders skip it.
        storedBody.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(storedBody.dropFirst(3)) : storedBody
    }

    /// The JSON of a stored notification of format `version` (1 or 2) built again from its stored body: the same
    /// text its batch stored and first published. Nil when this version cannot build it (a body stored by an
    /// earlier version).
    package static func rebuilt(version: Int, storedBody: [UInt8]) -> String? {
        switch version {
        case 1:
            return String(decoding: v1(storedBody: storedBody), as: UTF8.self)
        default:
            guard let built = try? v2(body: storedBody) else { return nil }
            return String(decoding: built.json, as: UTF8.self)
        }
    }

    /// The object at `range` of `bytes` without the string-valued `members` (nil when it has none), and their
    /// JWS payloads.
    private static func withoutSignedMembers(
        _ members: [SignedMember],
        in bytes: [UInt8],
        object range: Range<Int>,
        name: String,
        known: [Range<Int>: [UInt8]]
    ) throws(Unbuildable) -> (object: [UInt8], decoded: [SignedMember: [UInt8]])? {
        var scanner = JSONMemberScanner(bytes, objectAt: range.lowerBound)
        var kept: [Range<Int>] = []
        var decoded: [SignedMember: [UInt8]] = [:]
        var seen: Set<String> = []
        while let member = scanner.next() {
            guard let signed = members.first(where: { $0.location.member == member.name }) else {
                kept.append(member.range)
                continue
            }
            guard seen.insert(signed.location.member).inserted else {
                throw Unbuildable(reason: "'\(name)' has two '\(signed.location.member)' members")
            }
            // A null (or any non-string) value is not a JWS: the verifier decoded nothing, so it stays.
            guard bytes[member.value.lowerBound] == UInt8(ascii: "\"") else {
                kept.append(member.range)
                continue
            }
            if let payload = known[member.value.dropFirst().dropLast()] {
                decoded[signed] = payload
                continue
            }
            let compact = try stringBytes(bytes[member.value], what: "\(name).\(signed.location.member)")
            decoded[signed] = try jwsPayload(compact, what: "\(name).\(signed.location.member)")
        }
        guard scanner.isClosed else { throw Unbuildable(reason: "'\(name)' is not a JSON object") }
        guard !decoded.isEmpty else { return nil }
        var object: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in kept.enumerated() {
            if index > 0 { object.append(UInt8(ascii: ",")) }
            object += bytes[member]
        }
        object.append(UInt8(ascii: "}"))
        return (object, decoded)
    }

    /// Where the string token (quotes included) of the one member `name` of the object `bytes` lies.
    private static func onlyString(_ name: String, of bytes: [UInt8], what: String) throws(Unbuildable) -> Range<Int> {
        var scanner = JSONMemberScanner(bytes, objectAt: bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0)
        var found: Range<Int>?
        while let member = scanner.next() {
            guard member.name == name else { continue }
            guard found == nil else { throw Unbuildable(reason: "\(what) has two '\(name)' members") }
            found = member.value
        }
        guard let found, bytes[found.lowerBound] == UInt8(ascii: "\"") else {
            throw Unbuildable(reason: "\(what) has no '\(name)' string")
        }
        return found
    }

    /// A string token's characters as UTF-8 (unescaped when it has escapes).
    private static func stringBytes(_ token: ArraySlice<UInt8>, what: String) throws(Unbuildable) -> [UInt8] {
        // memchr: the tokens are JWS strings of kilobytes, almost never escaped.
        let escaped = token.withUnsafeBufferPointer { bytes in
            bytes.baseAddress.map { memchr($0, Int32(UInt8(ascii: "\\")), bytes.count) != nil } ?? false
        }
        guard !escaped else {
            guard let text = JSONMemberScanner.string(token) else {
                throw Unbuildable(reason: "\(what) is not a valid JSON string")
            }
            return Array(text.utf8)
        }
        return Array(token.dropFirst().dropLast())
    }

    /// The decoded payload of a compact JWS.
    private static func jwsPayload(_ compact: [UInt8], what: String) throws(Unbuildable) -> [UInt8] {
        let payload = compact.withUnsafeBufferPointer { bytes -> [UInt8]? in
            guard let segments = CompactJWSSegments(bytes) else { return nil }
            return Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[segments.payload]))
        }
        guard let payload else { throw Unbuildable(reason: "\(what) is not a compact JWS with a base64url payload") }
        return payload
    }
}
