import AppStoreModels
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Kafka key of a raw notification, read from the body **without verifying it**.
///
/// Keying by `originalTransactionId` puts every notification of a subscription on one partition, so workers see
/// them in the order they were received. The peek only picks a partition: a forged key can misplace a body, never
/// make it trusted, because workers verify every body and take the subscription from the verified payload.
package struct PartitionKey: Sendable, Hashable, CustomStringConvertible {
    /// Where the key came from.
    package enum Basis: String, Sendable, Hashable {
        /// The body's `originalTransactionId` (V2: in the signed transaction info; V1: top level or receipt info).
        case originalTransactionId
        /// A V2 body without a transaction (a summary, an external purchase token): its `notificationUUID`.
        case notificationUUID
        /// Neither could be read: a hash of the body, so such bodies still spread over the partitions.
        case bodyHash
    }

    /// The key to produce with.
    package var value: String
    /// Where ``value`` came from.
    package var basis: Basis

    package var description: String { value }

    package init(value: String, basis: Basis) {
        self.value = value
        self.basis = basis
    }

    /// Peeks at `body` (the exact bytes received) as a notification of format `version` (1 or 2).
    ///
    /// Returns nil when the body is not a JSON object: nothing Apple sends, so the receiver refuses it. Any JSON
    /// object gets a key, however malformed its content, because judging content is the workers' job.
    package static func peek(body: Data, version: Int) -> PartitionKey? {
        if version == 2, let key = plainPeek(body) { return key }
        return decodingPeek(body, version: version)
    }

    /// The peek through `JSONDecoder`, for any body.
    static func decodingPeek(_ body: Data, version: Int) -> PartitionKey? {
        let decoder = JSONDecoder()
        switch version {
        case 2:
            guard let outer = try? decoder.decode(SignedBodyProbe.self, from: body) else { return nil }
            if let payload = outer.signedPayload.flatMap({ jwsPayload($0, as: PayloadProbe.self) }) {
                if let key = payload.data?.signedTransactionInfo.flatMap({ jwsPayload($0, as: TransactionProbe.self) })?
                    .originalTransactionId, !key.isEmpty
                {
                    return PartitionKey(value: key, basis: .originalTransactionId)
                }
                if let uuid = payload.notificationUUID, !uuid.isEmpty {
                    return PartitionKey(value: uuid, basis: .notificationUUID)
                }
            }
        default:
            guard (try? decoder.decode(ObjectProbe.self, from: body)) != nil else { return nil }
            if let key = (try? decoder.decode(StatusUpdateNotification.self, from: body))?
                .resolvedOriginalTransactionId, !key.isEmpty
            {
                return PartitionKey(value: key, basis: .originalTransactionId)
            }
        }
        return hashing(body)
    }

    /// The V2 peek for plain JSON (everything Apple sends), read in place; nil when some part is not plain, and
    /// then the decoding peek decides. Gives the decoding peek's answer whenever it gives one.
    static func plainPeek(_ body: Data) -> PartitionKey? {
        body.withUnsafeBytes { raw -> PartitionKey? in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            guard let outer = PlainJSONObject.members(of: bytes, named: ["signedPayload"]) else { return nil }
            guard case .string(let signedPayload)? = outer[0],
                let payload = unverifiedPayload(UnsafeBufferPointer(rebasing: bytes[signedPayload]))
            else { return hashing(body) }
            return payload.withUnsafeBufferPointer { payload -> PartitionKey? in
                // One reading of the payload: `data` is most of it.
                guard
                    let members = PlainJSONObject.members(
                        of: payload,
                        at: [["notificationUUID"], ["data", "signedTransactionInfo"]]
                    )
                else { return nil }
                if case .string(let signedTransaction)? = members[1],
                    let transaction = unverifiedPayload(UnsafeBufferPointer(rebasing: payload[signedTransaction]))
                {
                    // .none: the transaction is not plain JSON (the decoding peek decides); .some(nil): it has no
                    // originalTransactionId string.
                    let key = transaction.withUnsafeBufferPointer { transaction -> String?? in
                        guard
                            let members = PlainJSONObject.members(of: transaction, named: ["originalTransactionId"])
                        else { return .none }
                        guard case .string(let key)? = members[0] else { return .some(nil) }
                        return .some(String(decoding: transaction[key], as: UTF8.self))
                    }
                    guard let key else { return nil }
                    if let key, !key.isEmpty { return PartitionKey(value: key, basis: .originalTransactionId) }
                }
                if case .string(let uuid)? = members[0], !uuid.isEmpty {
                    return PartitionKey(value: String(decoding: payload[uuid], as: UTF8.self), basis: .notificationUUID)
                }
                return hashing(body)
            }
        }
    }

    /// The base64url-decoded payload segment of a compact JWS, without checking its signature.
    private static func unverifiedPayload(_ jws: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        CompactJWSSegments(jws).flatMap { Base64URL.decode(UnsafeBufferPointer(rebasing: jws[$0.payload])) }
    }

    /// A key from the body's bytes: the first 16 bytes of its SHA-256, in hex.
    static func hashing(_ body: Data) -> PartitionKey {
        let digest = SHA256.hash(data: body)
        let hex = digest.prefix(16).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }
        return PartitionKey(value: "body-" + hex.joined(), basis: .bodyHash)
    }

    /// The decoded payload of a compact JWS, without checking its signature.
    private static func jwsPayload<Probe: Decodable>(_ jws: String, as probe: Probe.Type) -> Probe? {
        var jws = jws
        guard let payload = jws.withUTF8(unverifiedPayload) else { return nil }
        return try? JSONDecoder().decode(Probe.self, from: Data(payload))
    }
}

/// Any JSON object.
private struct ObjectProbe: Decodable {
    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// A V2 body's top level; any JSON object decodes, with a `signedPayload` only when it is a string.
private struct SignedBodyProbe: Decodable {
    var signedPayload: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedPayload = try? container.decodeIfPresent(String.self, forKey: .signedPayload)
    }

    private enum CodingKeys: String, CodingKey { case signedPayload }
}

/// The fields of a V2 payload the key may come from.
private struct PayloadProbe: Decodable {
    struct DataProbe: Decodable {
        var signedTransactionInfo: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            signedTransactionInfo = try? container.decodeIfPresent(String.self, forKey: .signedTransactionInfo)
        }

        private enum CodingKeys: String, CodingKey { case signedTransactionInfo }
    }

    var notificationUUID: String?
    var data: DataProbe?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationUUID = try? container.decodeIfPresent(String.self, forKey: .notificationUUID)
        data = try? container.decodeIfPresent(DataProbe.self, forKey: .data)
    }

    private enum CodingKeys: String, CodingKey { case notificationUUID, data }
}

/// The one field of a signed transaction the key needs.
private struct TransactionProbe: Decodable {
    var originalTransactionId: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try? container.decodeIfPresent(String.self, forKey: .originalTransactionId)
    }

    private enum CodingKeys: String, CodingKey { case originalTransactionId }
}
