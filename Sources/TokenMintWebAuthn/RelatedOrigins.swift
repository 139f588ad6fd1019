public import TokenMintCore

/// WebAuthn L3 related origins (§5.11): the origins a relying party
/// publishes at `https://<rp id>/.well-known/webauthn`, checked as a browser
/// will check them.
///
/// A browser walks the list in order and counts the distinct registrable
/// origin labels it meets (`example` for `https://shop.example.co.uk`); an
/// origin whose label would be beyond the fifth is never matched. A relying
/// party that accepted such an origin would accept what no browser sends, and
/// users there could not sign in: ``init(_:publicSuffixes:maximumLabels:)``
/// refuses the list instead.
public struct RelatedOrigins: Sendable, Hashable {
    /// The least number of labels a browser must accept (WebAuthn L3 §5.11.1).
    public static let maximumLabels = 5

    /// The origins, in the order published.
    public let origins: [String]
    /// Their distinct registrable origin labels, in order of first use.
    public let labels: [String]

    /// Checks `origins` (each `https://host[:port]`, or `http://localhost`):
    /// every one parses, has a registrable domain, and its label is among the
    /// first `maximumLabels` distinct ones.
    public init(_ origins: [String], publicSuffixes: PublicSuffixList, maximumLabels: Int = RelatedOrigins.maximumLabels)
        throws(TokenMintError)
    {
        var labels: [String] = []
        for origin in origins {
            guard let host = Self.host(ofOrigin: origin) else {
                throw TokenMintError(.webAuthn.invalidParameter, "\(SafeText.escaped(origin.prefix(128))) is not an https origin")
            }
            guard let label = host == "localhost" ? "localhost" : publicSuffixes.registrableLabel(host) else {
                throw TokenMintError(.webAuthn.invalidParameter, "\(SafeText.escaped(host.prefix(128))) has no registrable domain")
            }
            if !labels.contains(label) {
                guard labels.count < maximumLabels else {
                    throw TokenMintError(.webAuthn.invalidParameter,
                        "\(SafeText.escaped(origin.prefix(128))) brings a label (\(SafeText.escaped(label))) beyond the \(maximumLabels) browsers count: they would never match it")
                }
                labels.append(label)
            }
        }
        self.origins = origins
        self.labels = labels
    }

    /// The host of an `https://host[:port]` origin (or `http://localhost[:port]`),
    /// lowercased; nil for anything else (a path, a query, user info, a bad port).
    public static func host(ofOrigin origin: String) -> String? {
        let rest: Substring
        var plain = false
        if origin.hasPrefix("https://") {
            rest = origin.dropFirst(8)
        } else if origin.hasPrefix("http://") {
            rest = origin.dropFirst(7)
            plain = true
        } else {
            return nil
        }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains("?"), !rest.contains("#"),
            rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        var host = rest
        if let colon = rest.lastIndex(of: ":") {
            let port = rest[rest.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), Int(port).map({ (1...65535).contains($0) }) == true
            else { return nil }
            host = rest[..<colon]
        }
        guard !host.isEmpty, !host.hasPrefix("."), !host.contains("[") else { return nil }
        // Plain http only for localhost itself (not localhost.example).
        guard !plain || host.lowercased() == "localhost" else { return nil }
        return host.lowercased()
    }
}
