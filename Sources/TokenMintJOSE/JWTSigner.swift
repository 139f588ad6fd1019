public import TokenMintCore
public import TokenMintCrypto


/// Mints JWTs with one key: the protected header is encoded once, each token
/// costs one claims encoding, one signature and two base64url passes.
public struct JWTSigner: Sendable {
    /// The JWS signer underneath.
    public let signer: JWSSigner
    /// `typ` ("JWT" by default; "at+jwt" for RFC 9068 access tokens).
    public let type: String?
    private let prefix: [UInt8]  // base64url(header) "."

    /// A signer for `key` (algorithm as in ``JWSSigner/init(key:algorithm:)``).
    public init(key: JWK, algorithm: JWSAlgorithm? = nil, type: String? = "JWT", keyID: String? = nil, ecdsaNonce: ECDSA.Nonce = .random) throws(TokenMintError) {
        var signer = try JWSSigner(key: key, algorithm: algorithm)
        signer.ecdsaNonce = ecdsaNonce
        self.signer = signer
        self.type = type
        var prefix: [UInt8] = []
        Base64URL.encode(try signer.headerJSON(JWSHeaderFields(keyID: keyID, type: type)), into: &prefix)
        prefix.append(UInt8(ascii: "."))
        self.prefix = prefix
    }

    /// The compact JWT for `claims`.
    public func sign(_ claims: JWTClaims) throws(TokenMintError) -> String {
        var writer = JSONWriter(capacity: 256)
        claims.write(to: &writer)
        return try sign(claimsJSON: writer.bytes)
    }

    /// The compact JWT for a claims set already encoded as JSON (it must be a
    /// JSON object; it is checked strictly first).
    public func sign(claimsJSON json: [UInt8], validate: Bool = false) throws(TokenMintError) -> String {
        if validate {
            do {
                guard try JSONParser.parse(json).objectValue != nil else { throw TokenMintError.claim("the claims set must be a JSON object") }
            } catch {
                throw TokenMintError.wrap(error, as: .jose.invalidJSON, "claims: \(error)")
            }
        }
        var token = prefix
        token.reserveCapacity(prefix.count + json.count * 4 / 3 + 140)
        Base64URL.encode(json, into: &token)
        let signature = try token.withBytes { input throws(TokenMintError) in
            try signer.key.signature(over: input, algorithm: signer.algorithm, nonce: signer.ecdsaNonce)
        }
        token.append(UInt8(ascii: "."))
        Base64URL.encode(signature, into: &token)
        return String(decoding: token, as: UTF8.self)
    }
}
