import TokenMintCore
internal import CSodium

// The libsodium side of Ed25519 (the public API is in Ed25519.swift).

extension Ed25519.PrivateKey {
    /// A key pair for a fresh seed from the CSPRNG. A 32-byte seed cannot be
    /// rejected.
    static func sodiumGenerate() -> (SecureBytes, Ed25519.PublicKey) {
        let seed = SecureBytes(randomCount: 32)
        var publicBytes = [UInt8](repeating: 0, count: 32)
        let secretKey = SecureBytes(count: 64) { sk in
            seed.withUnsafeBytes { s in
                _ = crypto_sign_seed_keypair(&publicBytes, sk.bytes, s.bytes)
            }
        }
        return (secretKey, Ed25519.PublicKey(trusted: publicBytes))
    }

    /// libsodium's secret key (seed ‖ public key) and the public key for a seed.
    static func sodiumExpand(_ seed: UnsafeRawBufferPointer) throws(TokenMintError) -> (SecureBytes, Ed25519.PublicKey) {
        try Sodium.ensure()
        guard seed.count == 32 else {
            throw TokenMintError(.crypto.invalidKeySize, "Ed25519 private key must be 32 bytes, got \(seed.count)")
        }
        var publicBytes = [UInt8](repeating: 0, count: 32)
        let secretKey = try SecureBytes(count: 64) { sk throws(TokenMintError) in
            guard crypto_sign_seed_keypair(&publicBytes, sk.bytes, seed.bytes) == 0 else {
                throw TokenMintError(.crypto.libraryFailure, "crypto_sign_seed_keypair failed")
            }
        }
        return (secretKey, Ed25519.PublicKey(trusted: publicBytes))
    }

    /// `crypto_sign_detached` into `out`, which has room for 64 bytes.
    @inline(__always)
    package func signature(for message: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        secretKey.withUnsafeBytes { sk in
            _ = crypto_sign_detached(out.assumingMemoryBound(to: UInt8.self), nil, message.bytes, UInt64(message.count), sk.bytes)
        }
    }

    /// `crypto_sign_detached`: the 64-byte signature of `message`.
    @inline(__always)
    func sodiumSignature(for message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 64) { out, initialized in
            signature(for: message, into: UnsafeMutableRawPointer(out.baseAddress.unsafelyUnwrapped))
            initialized = 64
        }
    }
}

extension Ed25519.PublicKey {
    /// `crypto_sign_verify_detached` for a 64-byte signature (the caller
    /// checks the length): strict, so non-canonical S and small-order R fail.
    @inline(__always)
    func sodiumIsValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
        guard Sodium.ready else { return false }
        return crypto_sign_verify_detached(
            signature.bytes, message.bytes, UInt64(message.count),
            rawRepresentation) == 0
    }
}
