import TokenMintCore
import Foundation
import Testing
import TokenMintWebAuthn

/// The Public Suffix List algorithm and WebAuthn L3's related-origins label
/// limit (§5.11.1).
@Suite("Related origins")
struct RelatedOriginsTests {
    /// Rules in the list's own format, with the list's own examples.
    static let list = """
        // comment lines and blank lines are skipped

        com
        uk
        co.uk
        *.ck
        !www.ck
        jp
        *.kawasaki.jp
        !city.kawasaki.jp
        github.io
        """

    @Test("registrable domains: normal, wildcard and exception rules, the longest prevailing, * by default")
    func registrableDomains() throws {
        let psl = try PublicSuffixList(parsing: Self.list)
        #expect(psl.count == 9)
        let cases: [(String, String?)] = [
            ("example.com", "example.com"), ("www.Example.COM", "example.com"), ("com", nil), ("shop.example.co.uk", "example.co.uk"),
            ("co.uk", nil), ("example.uk", "example.uk"), ("a.b.ck", "a.b.ck"), ("b.ck", nil), ("www.ck", "www.ck"), ("x.www.ck", "www.ck"),
            ("a.b.kawasaki.jp", "a.b.kawasaki.jp"), ("b.kawasaki.jp", nil), ("city.kawasaki.jp", "city.kawasaki.jp"),
            ("user.github.io", "user.github.io"), ("github.io", nil), ("example.unlisted", "example.unlisted"), ("a.b.unlisted", "b.unlisted"),
            ("example.com.", "example.com"), ("", nil), ("a..com", nil), ("192.168.0.1", nil),
        ]
        for (host, expected) in cases { #expect(psl.registrableDomain(host) == expected, "\(host)") }
        #expect(psl.registrableLabel("shop.example.co.uk") == "example")
        #expect(PublicSuffixList.defaultRule.registrableDomain("shop.example.co.uk") == "co.uk")
        #expect(throws: TokenMintError.self) { try PublicSuffixList(parsing: "// only comments\n") }
    }

    @Test("related origins: at most five distinct labels, counted in order as a browser counts; malformed origins refused")
    func labelLimit() throws {
        let psl = try PublicSuffixList(parsing: Self.list)
        let five = ["https://shop.example.co.uk", "https://example.com", "https://example.de.unlisted", "https://pay.other.com:8443",
                    "https://third.com", "https://fourth.com"]
        let related = try RelatedOrigins(five, publicSuffixes: psl)
        // example.co.uk and example.com share the label "example".
        #expect(related.labels == ["example", "de", "other", "third", "fourth"])
        #expect(throws: TokenMintError.self) { try RelatedOrigins(five + ["https://fifth.com"], publicSuffixes: psl) }
        // A further origin of a label already counted is fine.
        _ = try RelatedOrigins(five + ["https://www.example.uk"], publicSuffixes: psl)
        _ = try RelatedOrigins(["http://localhost:8080"], publicSuffixes: psl)
        for bad in ["http://example.com", "http://localhost.evil.example", "http://localhost.evil.example:80", "https://example.com/", "https://co.uk", "https://a.com:0", "https://a.com:99999", "https://user@a.com",
                    "https://a.com?x", "ftp://a.com", "https://", "https://[::1]"] {
            #expect(throws: TokenMintError.self, "\(bad)") { try RelatedOrigins([bad], publicSuffixes: psl) }
        }
        #expect(RelatedOrigins.maximumLabels == 5)
    }

    @Test("the system's list, when installed, knows co.uk and github.io")
    func systemList() throws {
        guard let data = FileManager.default.contents(atPath: "/usr/share/publicsuffix/public_suffix_list.dat") else { return }
        let psl = try PublicSuffixList(parsing: String(decoding: data, as: UTF8.self))
        #expect(psl.count > 5000)
        #expect(psl.registrableDomain("shop.example.co.uk") == "example.co.uk")
        #expect(psl.registrableDomain("someone.github.io") == "someone.github.io")
    }
}
