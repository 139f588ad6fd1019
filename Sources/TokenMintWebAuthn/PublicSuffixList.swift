public import TokenMintCore

/// The Public Suffix List (publicsuffix.org): which domains are public
/// suffixes, hence the registrable domain of a host (its public suffix and
/// one more label). WebAuthn's related origins count origins by the first
/// label of their registrable domain.
///
/// Rules are matched as the list's algorithm says: normal rules, wildcards
/// (`*.ck`) and exceptions (`!www.ck`), the longest match prevailing, an
/// exception over all, and `*` when nothing matches. Hosts compare in ASCII
/// lowercase; a host in Unicode form must be given as its A-label (`xn--…`).
public struct PublicSuffixList: Sendable {
    private var rules: Set<String> = []
    private var wildcards: Set<String> = []
    private var exceptions: Set<String> = []

    /// The largest list text read (the list itself is about 250 KB).
    public static let maximumByteCount = 4 << 20

    /// Only the default rule `*`: every top-level domain is a public suffix
    /// and nothing else is (`example.co.uk` is then registrable as `co.uk`).
    public static let defaultRule = PublicSuffixList()

    private init() {}

    /// A list in the publicsuffix.org file format: one rule per line (the
    /// first word), `//` comments, blank lines ignored.
    public init(parsing text: String) throws(TokenMintError) {
        guard text.utf8.count <= Self.maximumByteCount else {
            throw TokenMintError(.webAuthn.invalidParameter, "a public suffix list is at most 4 MiB")
        }
        for line in text.split(whereSeparator: \.isNewline) {
            guard let word = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first, !word.hasPrefix("//") else { continue }
            let rule = word.lowercased()
            if rule.hasPrefix("!") {
                exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.insert(rule)
            }
        }
        guard !(rules.isEmpty && wildcards.isEmpty) else { throw TokenMintError(.webAuthn.invalidParameter, "the public suffix list has no rules") }
    }

    /// The number of rules read.
    public var count: Int { rules.count + wildcards.count + exceptions.count }

    /// The registrable domain of `host` (its public suffix and one more
    /// label), nil when the host is itself a public suffix, empty, or an IP address.
    public func registrableDomain(_ host: String) -> String? {
        let trimmed = host.hasSuffix(".") ? String(host.dropLast()) : host
        let labels = trimmed.lowercased().split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.isEmpty, labels.allSatisfy({ !$0.isEmpty }), !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }),
            !trimmed.contains(":")
        else { return nil }
        var suffixLength = 1
        for start in labels.indices {
            let suffix = labels[start...].joined(separator: ".")
            if exceptions.contains(suffix) {
                suffixLength = labels.count - start - 1
                break
            }
            let length = labels.count - start
            if rules.contains(suffix) || (start + 1 < labels.count && wildcards.contains(labels[(start + 1)...].joined(separator: "."))) {
                suffixLength = max(suffixLength, length)
            }
        }
        guard labels.count > suffixLength else { return nil }
        return labels[(labels.count - suffixLength - 1)...].joined(separator: ".")
    }

    /// The registrable origin label of `host` (WebAuthn L3 §5.11.1): the
    /// first label of its registrable domain; nil when it has none.
    public func registrableLabel(_ host: String) -> String? {
        registrableDomain(host).map { String($0.prefix { $0 != "." }) }
    }
}
