public import TokenMintCore
import TokenMintCrypto

/// Issues SD-JWTs (RFC 9901 §4): the claims named by JSON Pointers become
/// selectively disclosable, each under a fresh 128-bit salt, with `_sd`
/// digests sorted so their order says nothing, optional decoys, `_sd_alg`
/// sha-256 and, for key binding, the holder's public key in `cnf.jwk`.
public struct SDJWTIssuer: Sendable {
    let signer: JWTSigner

    /// An issuer signing with `key`. `type` is the header's `typ`:
    /// ``SDJWT/verifiableCredentialType`` for an SD-JWT VC, or nil.
    public init(key: JWK, algorithm: JWSAlgorithm? = nil, type: String? = nil, keyID: String? = nil) throws(TokenMintError) {
        signer = try JWTSigner(key: key, algorithm: algorithm, type: type, keyID: keyID ?? key.keyID)
    }

    /// Issues `claims` with the members and array elements at `disclosable`
    /// (RFC 6901 JSON Pointers: `/given_name`, `/address/street_address`,
    /// `/nationalities/1`) made selectively disclosable. A pointer may name
    /// a claim inside another disclosable one (recursive disclosure).
    /// - Parameters:
    ///   - claims: the claims set, signed as given apart from the disclosable claims.
    ///   - disclosable: JSON Pointers to the members and array elements to make disclosable.
    ///   - decoys: decoy digests added to the top-level `_sd` (at most 64).
    ///   - holderKey: the holder's key, put (public half only) in `cnf.jwk`.
    /// - Throws: `.jose.invalidClaim` for a pointer that names nothing, the
    ///   root, or claims that use the reserved names `_sd`, `_sd_alg`, `...`;
    ///   for an SD-JWT VC without a string `vct`.
    public func issue(_ claims: JSONObject, disclosable: [String], decoys: Int = 0, holderKey: JWK? = nil) throws(TokenMintError) -> SDJWT {
        guard decoys >= 0, decoys <= 64 else { throw TokenMintError.claim("0 to 64 decoys") }
        guard claims["cnf"] == nil || holderKey == nil else { throw TokenMintError.claim("cnf is set by holderKey") }
        if signer.type == SDJWT.verifiableCredentialType, claims["vct"]?.stringValue == nil {
            throw TokenMintError.claim("an SD-JWT VC needs a string vct claim")
        }
        let wanted = Set(disclosable)
        guard !wanted.contains("") else { throw TokenMintError.claim("the whole claims set cannot be one disclosure") }
        for name in SDJWTProcessor.alwaysSigned where wanted.contains("/" + name) {
            throw TokenMintError.claim("\(name) is never selectively disclosable: verifiers check it on the signed payload")
        }
        var builder = Builder(wanted: wanted)
        var payload = try builder.object(claims, path: "", decoys: decoys)
        let missing = wanted.subtracting(builder.found)
        guard missing.isEmpty else {
            throw TokenMintError.claim("no claim at \(missing.sorted().map { SafeText.escaped($0) }.joined(separator: ", "))")
        }
        payload.set("_sd_alg", .string("sha-256"))
        if let holderKey {
            guard let publicKey = holderKey.publicKey else { throw .key("a holder key is an asymmetric key") }
            payload.set("cnf", .object(["jwk": .object(publicKey.jsonObject(includingPrivate: false))]))
        }
        let jwt = try signer.sign(claimsJSON: JSONWriter.encode(.object(payload)))
        return SDJWT(issuerSignedJWT: jwt, disclosures: builder.disclosures)
    }

    struct Builder {
        let wanted: Set<String>
        var found: Set<String> = []
        var disclosures: [SDJWTDisclosure] = []

        mutating func value(_ value: JSONValue, path: String) throws(TokenMintError) -> JSONValue {
            if let object = value.objectValue { return .object(try self.object(object, path: path, decoys: 0)) }
            if let array = value.arrayValue { return .array(try self.array(array, path: path)) }
            return value
        }

        mutating func object(_ object: JSONObject, path: String, decoys: Int) throws(TokenMintError) -> JSONObject {
            var out = JSONObject()
            var digests: [String] = []
            for member in object {
                guard member.name != "_sd", member.name != "_sd_alg", member.name != "..." else {
                    throw TokenMintError.claim("the claim name \"\(member.name)\" is reserved for SD-JWT")
                }
                let childPath = path + "/" + SDJWTPointer.escape(member.name)
                let processed = try value(member.value, path: childPath)
                if wanted.contains(childPath) {
                    found.insert(childPath)
                    let d = try SDJWTDisclosure(name: member.name, value: processed)
                    disclosures.append(d)
                    digests.append(d.digest)
                } else {
                    out.set(member.name, processed)
                }
            }
            for _ in 0..<decoys { digests.append(B64.encode(HashFunction.sha256.hash(SecureRandom.bytes(count: 32)))) }
            if !digests.isEmpty { out.set("_sd", .array(digests.sorted().map { .string($0) })) }
            return out
        }

        mutating func array(_ array: [JSONValue], path: String) throws(TokenMintError) -> [JSONValue] {
            var out: [JSONValue] = []
            for (index, element) in array.enumerated() {
                let childPath = path + "/\(index)"
                let processed = try value(element, path: childPath)
                if wanted.contains(childPath) {
                    found.insert(childPath)
                    let d = try SDJWTDisclosure(name: nil, value: processed)
                    disclosures.append(d)
                    out.append(.object(["...": .string(d.digest)]))
                } else {
                    out.append(processed)
                }
            }
            return out
        }
    }
}
