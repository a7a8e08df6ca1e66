import AppStoreTestSupport
import Foundation
import Testing

@testable import Ingress

@Suite("Request ids", .tags(.fast))
struct RequestIdentifiersTests {
    @Test("random version-4 UUIDs in lowercase, as UUID().uuidString.lowercased() writes them, none repeated")
    func randomLowercaseUUIDs() throws {
        // More than the pool holds at once (256 ids a read), so refills are crossed.
        let ids = (0..<10_000).map { _ in RequestIdentifiers.next() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(1_000) {
            let uuid = try #require(UUID(uuidString: id), "\(id) is not a UUID")
            #expect(uuid.uuidString.lowercased() == id)
            let characters = Array(id)
            #expect(characters[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(characters[19]), "RFC 9562 variant: \(id)")
        }
    }
}
