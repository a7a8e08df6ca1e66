import AppStoreTestSupport
import Testing

@testable import Ingress

@Suite("IP networks for the allow-list and trusted proxies", .tags(.fast))
struct IPNetworkTests {
    @Test("IPv4 ranges contain their addresses and nothing else; mapped IPv6 addresses count as IPv4")
    func ipv4() throws {
        let apple = try #require(IPNetwork("17.0.0.0/8"))
        #expect(apple.contains("17.1.2.3"))
        #expect(apple.contains("::ffff:17.1.2.3"))
        #expect(!apple.contains("18.1.2.3"))
        #expect(!apple.contains("::1"))
        #expect(!apple.contains("not an address"))
        let narrow = try #require(IPNetwork("10.1.2.128/25"))
        #expect(narrow.contains("10.1.2.200"))
        #expect(!narrow.contains("10.1.2.127"))
        let single = try #require(IPNetwork("127.0.0.1"))
        #expect(single.contains("127.0.0.1"))
        #expect(!single.contains("127.0.0.2"))
    }

    @Test("IPv6 ranges, zones ignored")
    func ipv6() throws {
        let range = try #require(IPNetwork("2001:db8::/32"))
        #expect(range.contains("2001:db8:1::5"))
        #expect(!range.contains("2001:db9::1"))
        #expect(try #require(IPNetwork("fe80::/10")).contains("fe80::1%eth0"))
        #expect(try #require(IPNetwork("::/0")).contains("::1"))
    }

    @Test(
        "Invalid ranges are refused",
        arguments: ["", "17.0.0.0/33", "17.0.0.0/-1", "1.2.3", "::/129", "17.0.0.0/8/8", "x/8"]
    )
    func invalid(text: String) {
        #expect(IPNetwork(text) == nil)
    }
}
