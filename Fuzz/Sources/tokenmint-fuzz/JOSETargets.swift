import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE

/// Verifiers over the RFC 7520 public keys (Fuzz/Data/jwks.json) and its
/// HMAC key (Fuzz/Data/oct.json), so seeded tokens reach the signature check.
nonisolated(unsafe) var publicVerifier: JWSVerifier?
nonisolated(unsafe) var secretVerifier: JWSVerifier?
nonisolated(unsafe) var jwtVerifier: JWTVerifier?

func prepareJOSEFixtures() {
    prepareJWEFixtures()
    if let text = dataFile("jwks.json"), let set = try? JWKSet(json: String(decoding: text, as: UTF8.self)) {
        publicVerifier = JWSVerifier(keys: set)
        var validation = JWTValidation()
        validation.requiredClaims = []
        jwtVerifier = JWTVerifier(keys: set, validation: validation)
    }
    if let text = dataFile("oct.json"), let key = try? JWK(jsonBytes: text), let set = try? JWKSet(key) {
        var policy = JWSPolicy()
        policy.allowsUnencodedPayload = true
        secretVerifier = JWSVerifier(keys: set, policy: policy)
    }
}

/// base64url: strict decoding, and whatever decodes encodes back to the input.
func fuzzBase64URL(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    if let bytes = try? Base64URL.decode(text) {
        guard Base64URL.encode(bytes) == text else { violated("base64url decode accepted a non-canonical text") }
    }
    if let bytes = try? Base64URL.decode(text, padding: .padded) {
        guard Base64URL.encode(bytes, padding: .padded) == text else { violated("padded base64url accepted a non-canonical text") }
    }
    let fast = input.withUnsafeBytes { try? Base64URL.decodePublic($0) }
    let slow = try? Base64URL.decode(text)
    if input.allSatisfy({ $0 < 0x80 }), fast != slow { violated("the table decoder and the libsodium decoder disagree") }
}

/// JSON: the parser's limits hold, and a parsed value survives write → parse.
func fuzzJSON(_ input: [UInt8]) {
    guard let value = try? JSONParser.parse(input) else { return }
    let written = JSONWriter.encode(value)
    guard let again = try? JSONParser.parse(written) else { violated("written JSON does not parse") }
    guard again == value else { violated("JSON changed in a write → parse round trip") }
}

/// JWS compact serialization, through the JWS and JWT verifiers and the
/// unverified decoders.
func fuzzJWSCompact(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    _ = try? publicVerifier?.verify(compact: text)
    _ = try? secretVerifier?.verify(compact: text)
    _ = input.withUnsafeBytes { try? publicVerifier?.verify(compact: $0) }
    _ = try? jwtVerifier?.verify(text)
    _ = try? UnverifiedJWT.decode(text)
    _ = try? UnsecuredJWS.decode(text)
}

/// JWS JSON serialization (flattened and general).
func fuzzJWSJSON(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    _ = try? publicVerifier?.verify(json: text)
    _ = try? secretVerifier?.verify(json: text)
    _ = try? secretVerifier?.verify(json: text, detachedPayload: Array("detached".utf8))
}

/// JWK and JWK Set parsing; a parsed key survives JSON → JWK → JSON, and its
/// thumbprint does not depend on the round trip.
func fuzzJWK(_ input: [UInt8]) {
    if let key = try? JWK(jsonBytes: input) {
        let json = key.json
        guard let again = try? JWK(json: json) else { violated("a JWK's own JSON does not parse") }
        guard again.json == json, again.thumbprint() == key.thumbprint() else { violated("JWK changed in a round trip") }
        if let pem = try? key.pemRepresentation() {
            guard let fromPEM = try? JWK(pem: pem) else { violated("a JWK's own PEM does not parse") }
            guard fromPEM.thumbprint() == key.thumbprint() else { violated("JWK → PEM → JWK changed the key") }
        }
        _ = key.publicKey?.json
    }
    _ = try? JWKSet(json: String(decoding: input, as: UTF8.self))
}

/// PEM and DER key import: the first byte picks the decoder.
func fuzzKeyImport(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    let body = Array(input.dropFirst())
    let text = String(decoding: body, as: UTF8.self)
    switch selector % 12 {
    case 0: _ = try? Ed25519.PublicKey(derRepresentation: body)
    case 1: _ = try? Ed25519.PrivateKey(derRepresentation: body)
    case 2:
        if let key = try? ECDSA.PublicKey(derRepresentation: body) {
            guard let again = try? ECDSA.PublicKey(derRepresentation: key.derRepresentation), again == key else {
                violated("an EC public key does not survive DER → key → DER")
            }
        }
    case 3: _ = try? ECDSA.PrivateKey(derRepresentation: body)
    case 4:
        if let key = try? RSA.PublicKey(derRepresentation: body) {
            guard let again = try? RSA.PublicKey(derRepresentation: key.derRepresentation), again == key else {
                violated("an RSA public key does not survive DER → key → DER")
            }
        }
    case 5: _ = try? RSA.PrivateKey(derRepresentation: body)
    case 6: _ = try? X509Certificate(derRepresentation: body)
    case 7: _ = try? JWK(pem: text)
    case 8: _ = try? Ed25519.PublicKey(pemRepresentation: text)
    case 9: _ = try? ECDSA.PrivateKey(pemRepresentation: text)
    case 10: _ = try? RSA.PublicKey(pemRepresentation: text)
    default: _ = try? RSA.PrivateKey(pemRepresentation: text)
    }
}

/// The RFC 7520 §5 recipients' private keys (Fuzz/Data/jwe-keys.json) and an
/// SD-JWT verifier over the RFC 7520 public keys, so seeded JWEs and SD-JWTs
/// reach decryption and the disclosure rules.
/// The keys as JSON, parsed for each input: LeakSanitizer does not follow
/// the pointers of every Swift enum layout, and reported private keys kept
/// in a global as leaked.
nonisolated(unsafe) var jweKeyObjects: [JSONObject] = []
nonisolated(unsafe) var sdjwtVerifier: SDJWTVerifier?

func prepareJWEFixtures() {
    if let text = dataFile("jwe-keys.json"), let object = try? JSONParser.parse(text).objectValue, let keys = object["keys"]?.arrayValue {
        jweKeyObjects = keys.compactMap(\.objectValue)
    }
    if let text = dataFile("jwks.json"), let set = try? JWKSet(json: String(decoding: text, as: UTF8.self)) {
        sdjwtVerifier = SDJWTVerifier(issuerKeys: set)
    }
}

/// JWE in any serialization: what parses survives its own general JSON form,
/// then every recipient key tries to decrypt it.
func fuzzJWE(_ input: [UInt8]) {
    guard let jwe = try? JWE(parsing: String(decoding: input, as: UTF8.self)) else { return }
    guard let again = try? JWE(parsing: jwe.generalJSON), again.protectedSegment == jwe.protectedSegment, again.iv == jwe.iv,
        again.ciphertext == jwe.ciphertext, again.tag == jwe.tag, again.recipients.count == jwe.recipients.count,
        again.additionalDataSegment == jwe.additionalDataSegment
    else { violated("a JWE changed in a general JSON round trip") }
    if let compact = try? jwe.compactSerialization, (try? JWE(parsing: compact))?.protectedSegment != jwe.protectedSegment {
        violated("a JWE's own compact form does not parse back")
    }
    for object in jweKeyObjects {
        guard let key = try? JWK(object: object) else { continue }
        _ = try? jwe.decrypt(using: key)
    }
}

/// SD-JWT and presentations: what parses serializes back to itself; the
/// verifier (issuer signature, disclosures, key binding) refuses with typed errors.
func fuzzSDJWT(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    if let sdjwt = try? SDJWT(parsing: text) {
        guard let again = try? SDJWT(parsing: sdjwt.serialization), again.serialization == sdjwt.serialization else {
            violated("an SD-JWT changed in a round trip")
        }
        _ = try? sdjwt.presenting(["/given_name", "/address/street_address"])
    }
    _ = try? sdjwtVerifier?.verify(text)
    _ = try? sdjwtVerifier?.verify(text, audience: "https://verifier.example", nonce: "n-0S6_WzA2Mj")
}
