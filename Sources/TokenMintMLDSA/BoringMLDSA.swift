#if MLDSA
internal import CCryptoBoringSSL

/// ML-DSA (FIPS 204) from the BoringSSL swift-crypto builds, over raw
/// buffers: TokenMintCrypto's `MLDSA` is the API. `set` is 44, 65 or 87.
/// Every function returns false (or 0) for anything else.
enum BoringMLDSA {
    /// Size and alignment of the parsed public key structure.
    static func publicLayout(_ set: Int) -> (size: Int, alignment: Int) {
        switch set {
        case 44: (MemoryLayout<MLDSA44_public_key>.size, MemoryLayout<MLDSA44_public_key>.alignment)
        case 65: (MemoryLayout<MLDSA65_public_key>.size, MemoryLayout<MLDSA65_public_key>.alignment)
        default: (MemoryLayout<MLDSA87_public_key>.size, MemoryLayout<MLDSA87_public_key>.alignment)
        }
    }

    /// Size and alignment of the expanded private key structure.
    static func privateLayout(_ set: Int) -> (size: Int, alignment: Int) {
        switch set {
        case 44: (MemoryLayout<MLDSA44_private_key>.size, MemoryLayout<MLDSA44_private_key>.alignment)
        case 65: (MemoryLayout<MLDSA65_private_key>.size, MemoryLayout<MLDSA65_private_key>.alignment)
        default: (MemoryLayout<MLDSA87_private_key>.size, MemoryLayout<MLDSA87_private_key>.alignment)
        }
    }

    /// Parses an encoded public key (exactly, no trailing bytes) into `key`.
    static func parsePublicKey(_ set: Int, _ encoded: UnsafeRawBufferPointer, into key: UnsafeMutableRawPointer) -> Bool {
        var cbs = CBS()
        CCryptoBoringSSL_CBS_init(&cbs, encoded.baseAddress?.assumingMemoryBound(to: UInt8.self), encoded.count)
        switch set {
        case 44: return CCryptoBoringSSL_MLDSA44_parse_public_key(key.assumingMemoryBound(to: MLDSA44_public_key.self), &cbs) == 1
        case 65: return CCryptoBoringSSL_MLDSA65_parse_public_key(key.assumingMemoryBound(to: MLDSA65_public_key.self), &cbs) == 1
        case 87: return CCryptoBoringSSL_MLDSA87_parse_public_key(key.assumingMemoryBound(to: MLDSA87_public_key.self), &cbs) == 1
        default: return false
        }
    }

    /// Verifies a pure ML-DSA signature with `context`.
    static func verify(_ set: Int, key: UnsafeRawPointer, signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer,
                               context: UnsafeRawBufferPointer) -> Bool {
        let s = signature.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let m = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let c = context.baseAddress?.assumingMemoryBound(to: UInt8.self)
        switch set {
        case 44:
            return CCryptoBoringSSL_MLDSA44_verify(key.assumingMemoryBound(to: MLDSA44_public_key.self), s, signature.count, m, message.count,
                                                   c, context.count) == 1
        case 65:
            return CCryptoBoringSSL_MLDSA65_verify(key.assumingMemoryBound(to: MLDSA65_public_key.self), s, signature.count, m, message.count,
                                                   c, context.count) == 1
        case 87:
            return CCryptoBoringSSL_MLDSA87_verify(key.assumingMemoryBound(to: MLDSA87_public_key.self), s, signature.count, m, message.count,
                                                   c, context.count) == 1
        default: return false
        }
    }

    /// Expands a 32-byte seed into the private key structure at `key`.
    static func expand(_ set: Int, seed: UnsafeRawBufferPointer, into key: UnsafeMutableRawPointer) -> Bool {
        let p = seed.baseAddress?.assumingMemoryBound(to: UInt8.self)
        switch set {
        case 44: return CCryptoBoringSSL_MLDSA44_private_key_from_seed(key.assumingMemoryBound(to: MLDSA44_private_key.self), p, seed.count) == 1
        case 65: return CCryptoBoringSSL_MLDSA65_private_key_from_seed(key.assumingMemoryBound(to: MLDSA65_private_key.self), p, seed.count) == 1
        case 87: return CCryptoBoringSSL_MLDSA87_private_key_from_seed(key.assumingMemoryBound(to: MLDSA87_private_key.self), p, seed.count) == 1
        default: return false
        }
    }

    /// Writes the encoded public key of the private key at `key` into `out`
    /// (exactly the encoding's length).
    static func encodePublicKey(_ set: Int, privateKey key: UnsafeRawPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let layout = publicLayout(set)
        let publicKey = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: layout.alignment)
        defer { publicKey.deallocate() }
        var cbb = CBB()
        guard CCryptoBoringSSL_CBB_init_fixed(&cbb, out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count) == 1 else { return false }
        defer { CCryptoBoringSSL_CBB_cleanup(&cbb) }
        let ok: Bool
        switch set {
        case 44:
            let p = publicKey.assumingMemoryBound(to: MLDSA44_public_key.self)
            ok = CCryptoBoringSSL_MLDSA44_public_from_private(p, key.assumingMemoryBound(to: MLDSA44_private_key.self)) == 1
                && CCryptoBoringSSL_MLDSA44_marshal_public_key(&cbb, p) == 1
        case 65:
            let p = publicKey.assumingMemoryBound(to: MLDSA65_public_key.self)
            ok = CCryptoBoringSSL_MLDSA65_public_from_private(p, key.assumingMemoryBound(to: MLDSA65_private_key.self)) == 1
                && CCryptoBoringSSL_MLDSA65_marshal_public_key(&cbb, p) == 1
        case 87:
            let p = publicKey.assumingMemoryBound(to: MLDSA87_public_key.self)
            ok = CCryptoBoringSSL_MLDSA87_public_from_private(p, key.assumingMemoryBound(to: MLDSA87_private_key.self)) == 1
                && CCryptoBoringSSL_MLDSA87_marshal_public_key(&cbb, p) == 1
        default: ok = false
        }
        return ok && CCryptoBoringSSL_CBB_len(&cbb) == out.count
    }

    /// A hedged signature into `out` (exactly the signature's length).
    static func sign(_ set: Int, privateKey key: UnsafeRawPointer, message: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer,
                             into out: UnsafeMutableRawBufferPointer) -> Bool {
        let o = out.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let m = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let c = context.baseAddress?.assumingMemoryBound(to: UInt8.self)
        switch set {
        case 44: return CCryptoBoringSSL_MLDSA44_sign(o, key.assumingMemoryBound(to: MLDSA44_private_key.self), m, message.count, c, context.count) == 1
        case 65: return CCryptoBoringSSL_MLDSA65_sign(o, key.assumingMemoryBound(to: MLDSA65_private_key.self), m, message.count, c, context.count) == 1
        case 87: return CCryptoBoringSSL_MLDSA87_sign(o, key.assumingMemoryBound(to: MLDSA87_private_key.self), m, message.count, c, context.count) == 1
        default: return false
        }
    }
}
#endif
