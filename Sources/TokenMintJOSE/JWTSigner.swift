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
        // The signing input is built in a temporary buffer (on the stack for
        // a typical token); the token is written once, into its string.
        let inputCount = prefix.count + Base64URL.encodedCount(json.count)
        return try withUnsafeTemporaryAllocation(byteCount: inputCount, alignment: 16) { (buffer) throws(TokenMintError) -> String in
            let base = buffer.baseAddress.unsafelyUnwrapped
            prefix.withUnsafeBytes { base.copyMemory(from: $0.baseAddress.unsafelyUnwrapped, byteCount: $0.count) }
            _ = json.withUnsafeBytes { Base64URL.encodePublic($0, at: base + prefix.count) }
            let input = UnsafeRawBufferPointer(start: base, count: inputCount)
            return try signer.key.withSignature(over: input, algorithm: signer.algorithm, nonce: signer.ecdsaNonce) { signature in
                let count = inputCount + 1 + Base64URL.encodedCount(signature.count)
                return String(unsafeUninitializedCapacity: count) { out in
                    let target = UnsafeMutableRawPointer(out.baseAddress.unsafelyUnwrapped)
                    target.copyMemory(from: base, byteCount: inputCount)
                    target.storeBytes(of: UInt8(ascii: "."), toByteOffset: inputCount, as: UInt8.self)
                    _ = Base64URL.encodePublic(signature, at: target + inputCount + 1)
                    return count
                }
            }
        }
    }
}
