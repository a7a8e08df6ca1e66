import Foundation
import KafkaClient
import NIOCore
import NotificationBodies
import NotificationStore

/// Writes rows in PostgreSQL's COPY text format: tab-separated fields, one row per line, `\N` for NULL, and
/// backslash escapes for backslash, tab, newline and carriage return.
struct CopyTextEncoder {
    private(set) var buffer: ByteBuffer
    private var fieldsInRow = 0

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    mutating func text(_ value: String?) {
        separate()
        guard var value else { return writeNull() }
        value.withUTF8 { bytes in
            // Most fields need no escape: copy them whole.
            guard bytes.contains(where: Self.needsEscape) else {
                buffer.writeBytes(bytes)
                return
            }
            // Runs without escapes are copied whole, then the escape.
            var runStart = 0
            for (index, byte) in bytes.enumerated() where Self.needsEscape(byte) {
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<index])))
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                default: buffer.writeStaticString("\\r")
                }
                runStart = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart...])))
        }
    }

    /// A `bytea` field in PostgreSQL's hex format, its backslash escaped for COPY: `\\x` and two digits a byte.
    mutating func bytea(_ bytes: [UInt8]) {
        separate()
        let digits: StaticString = "0123456789abcdef"
        buffer.writeStaticString("\\\\x")
        buffer.reserveCapacity(minimumWritableBytes: bytes.count * 2)
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                buffer.writeInteger(digits[Int(byte >> 4)])
                buffer.writeInteger(digits[Int(byte & 0x0F)])
            }
        }
    }

    mutating func integer(_ value: (some BinaryInteger)?) {
        separate()
        guard let value else { return writeNull() }
        buffer.writeString(String(value))
    }

    mutating func boolean(_ value: Bool?) {
        separate()
        guard let value else { return writeNull() }
        buffer.writeInteger(UInt8(ascii: value ? "t" : "f"))
    }

    mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        fieldsInRow = 0
    }

    private mutating func separate() {
        if fieldsInRow > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
        fieldsInRow += 1
    }

    private mutating func writeNull() {
        buffer.writeStaticString("\\N")
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }
}

extension CopyTextEncoder {
    /// One staged row, in ``BatchStatements/stagedColumns`` order.
    mutating func row(_ row: NotificationRow) {
        integer(row.ordinal)
        text(row.notificationUUID.uuidString)
        integer(row.version)
        text(row.notificationType)
        text(row.subtype)
        text(row.environment)
        text(row.bundleId)
        integer(row.appAppleId)
        text(row.originalTransactionId)
        text(row.transactionId)
        text(row.productId)
        integer(row.signedDate)
        integer(row.expiresDate)
        integer(row.revocationDate)
        integer(row.autoRenewStatus)
        integer(row.status)
        integer(row.gracePeriodExpiresDate)
        text(row.autoRenewProductId)
        integer(row.price)
        text(row.currency)
        integer(row.offerType)
        integer(row.stateDate)
        boolean(row.carriesTransaction)
        boolean(row.carriesRenewalInfo)
        integer(row.purchaseDate)
        text(row.productType)
        integer(row.revocationReason)
        text(row.inAppOwnershipType)
        text(row.subscriptionGroupIdentifier)
        text(row.appAccountToken)
        text(row.previousOriginalTransactionId)
        integer(row.renewalDate)
        boolean(row.isInBillingRetry)
        integer(row.expirationIntent)
        text(row.decoded)
        bytea(row.body.bytes)
        integer(row.receivedAt)
        text(row.source.topic)
        integer(row.source.partition)
        integer(row.source.offset)
        endRow()
    }
}
