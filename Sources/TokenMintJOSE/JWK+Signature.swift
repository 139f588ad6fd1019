import TokenMintCore
import TokenMintCrypto
import TokenMintMLDSA

extension JWK {
    /// The JWS signature (RFC 7518 §3) of `input` with `algorithm`. The caller
    /// has admitted the algorithm.
    func signature(over input: UnsafeRawBufferPointer, algorithm: JWSAlgorithm, nonce: ECDSA.Nonce) throws(TokenMintError) -> [UInt8] {
        do throws(TokenMintError) {
            switch material {
            case .secret(let secret):
                guard let key = secret.key(for: algorithm.hash) else { throw TokenMintError(.crypto.invalidKeySize, "HMAC key too short") }
                return HMAC.authenticationCode(for: input, using: key)
            case .rsaPrivate(let key):
                return try key.signature(for: input, hash: algorithm.hash, padding: algorithm.rsaPadding ?? .pkcs1v15)
            case .ecPrivate(let key):
                return try key.signature(for: input, hash: algorithm.hash, nonce: nonce).rawRepresentation
            case .ed25519Private(let key):
                return key.signature(for: input)
            case .ed448Private(let key):
                return try key.signature(for: input)
            case .mlDSAPrivate(let key):
                return try key.signature(for: Array(input))
            case .rsaPublic, .ecPublic, .ed25519Public, .ed448Public, .mlDSAPublic:
                throw TokenMintError(.crypto.invalidKey, "a public key cannot sign")
            case .x25519Public, .x25519Private:
                throw TokenMintError(.crypto.invalidKey, "an X25519 key agrees on keys, it does not sign")
            }
        } catch {
            throw TokenMintError(.jose.signingFailed, "\(algorithm) signing failed: \(error.reason)", underlying: error)
        }
    }

    /// Runs `body` on the signature of `input`: Ed25519 signatures and HMAC
    /// tags are made on the stack, others in an array.
    func withSignature<R>(
        over input: UnsafeRawBufferPointer, algorithm: JWSAlgorithm, nonce: ECDSA.Nonce, _ body: (UnsafeRawBufferPointer) -> R
    ) throws(TokenMintError) -> R {
        switch material {
        case .ed25519Private(let key):
            return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { out in
                key.signature(for: input, into: out.baseAddress.unsafelyUnwrapped)
                return body(UnsafeRawBufferPointer(out))
            }
        case .secret(let secret):
            guard let key = secret.key(for: algorithm.hash) else {
                let short = TokenMintError(.crypto.invalidKeySize, "HMAC key too short")
                throw TokenMintError(.jose.signingFailed, "\(algorithm) signing failed: \(short.reason)", underlying: short)
            }
            return try withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { (out) throws(TokenMintError) -> R in
                let count = HMAC.authenticationCode(for: input, using: key, into: out)
                guard count == algorithm.hash.digestSize else {
                    throw TokenMintError(.jose.signingFailed, "\(algorithm) signing failed: OpenSSL's HMAC failed")
                }
                return body(UnsafeRawBufferPointer(rebasing: out[..<count]))
            }
        default:
            return try signature(over: input, algorithm: algorithm, nonce: nonce).withUnsafeBytes(body)
        }
    }

    /// Whether `signature` is a valid JWS signature of `input`. Lengths are
    /// exact: HMAC tags are never truncated, ECDSA is r‖s of the curve's size
    /// with r, s in [1, n−1], RSA signatures are the modulus length.
    func isValidSignature(_ signature: [UInt8], over input: UnsafeRawBufferPointer, algorithm: JWSAlgorithm) -> Bool {
        signature.withUnsafeBytes { isValidSignature($0, over: input, algorithm: algorithm) }
    }

    /// ``isValidSignature(_:over:algorithm:)`` for a signature in a buffer
    /// (a token's signature decoded on the stack).
    func isValidSignature(_ signature: UnsafeRawBufferPointer, over input: UnsafeRawBufferPointer, algorithm: JWSAlgorithm) -> Bool {
        switch material {
        case .secret(let secret):
            guard let key = secret.key(for: algorithm.hash), signature.count == algorithm.hash.digestSize else { return false }
            return HMAC.isValidAuthenticationCode(signature, for: input, using: key)
        case .rsaPublic(let key):
            return key.isValidSignature(signature, for: input, hash: algorithm.hash, padding: algorithm.rsaPadding ?? .pkcs1v15)
        case .rsaPrivate(let key):
            return key.publicKey.isValidSignature(signature, for: input, hash: algorithm.hash, padding: algorithm.rsaPadding ?? .pkcs1v15)
        case .ecPublic(let key):
            guard let parsed = try? ECDSA.Signature(rawRepresentation: Array(signature), curve: key.curve) else { return false }
            return key.isValidSignature(parsed, for: input, hash: algorithm.hash)
        case .ecPrivate(let key):
            guard let parsed = try? ECDSA.Signature(rawRepresentation: Array(signature), curve: key.curve) else { return false }
            return key.publicKey.isValidSignature(parsed, for: input, hash: algorithm.hash)
        case .ed25519Public(let key):
            return key.isValidSignature(signature, for: input)
        case .ed25519Private(let key):
            return key.publicKey.isValidSignature(signature, for: input)
        case .ed448Public(let key):
            return key.isValidSignature(Array(signature), for: input)
        case .ed448Private(let key):
            return key.publicKey.isValidSignature(Array(signature), for: input)
        case .mlDSAPublic(let key):
            return key.isValidSignature(Array(signature), for: Array(input))
        case .mlDSAPrivate(let key):
            return key.publicKey.isValidSignature(Array(signature), for: Array(input))
        case .x25519Public, .x25519Private:
            return false
        }
    }
}
