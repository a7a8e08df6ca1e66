import NIOCore
import PostgresNIO

/// A one-dimensional PostgreSQL array whose elements may be NULL, in the binary format.
///
/// PostgresNIO encodes `[Element]` but not `[Element?]`; `UNNEST` of nullable columns needs the NULLs.
package struct NullableArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>:
    PostgresNonThrowingEncodable
{
    package var elements: [Element?]

    package init(_ elements: [Element?]) {
        self.elements = elements
    }

    package static var psqlType: PostgresDataType { Element.psqlArrayType }
    package static var psqlFormat: PostgresFormat { .binary }

    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer,
        context: PostgresEncodingContext<JSONEncoder>
    ) {
        // Header: dimensions, has-nulls flag, element type; then per dimension its length and lower bound.
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains(where: { $0 == nil }) ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            if let element {
                // Each element: its length in bytes, then its value.
                let lengthIndex = buffer.writerIndex
                buffer.writeInteger(0, as: Int32.self)
                let start = buffer.writerIndex
                element.encode(into: &buffer, context: context)
                buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
            } else {
                buffer.writeInteger(-1, as: Int32.self)
            }
        }
    }
}
