internal import CSodium

// The libsodium side of ECDSA: HMAC-SHA-256 and HMAC-SHA-512 for the RFC 6979
// nonce DRBG (the rest is in ECDSA_libcrypto.swift, the public API in
// ECDSA.swift).

extension ECKeyPair {
    /// HMAC-SHA-256 (or, when `wide`, HMAC-SHA-512) of `data` under `key`
    /// into `out`, which holds exactly 32 (or 64) bytes; the state is wiped.
    @inline(__always)
    static func sodiumHMAC(wide: Bool, key: [UInt8], _ data: [UInt8], into out: inout [UInt8]) {
        if wide {
            var state = crypto_auth_hmacsha512_state()
            crypto_auth_hmacsha512_init(&state, key, key.count)
            crypto_auth_hmacsha512_update(&state, data, UInt64(data.count))
            crypto_auth_hmacsha512_final(&state, &out)
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
        } else {
            var state = crypto_auth_hmacsha256_state()
            crypto_auth_hmacsha256_init(&state, key, key.count)
            crypto_auth_hmacsha256_update(&state, data, UInt64(data.count))
            crypto_auth_hmacsha256_final(&state, &out)
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
        }
    }
}
