import TokenMintCore
internal import CLibCrypto
internal import CLibCryptoShims
import Synchronization

// The OpenSSL side of HMAC and HMACKey (the public API is in HMAC.swift and
// HMACKey.swift).

/// An `EVP_MAC_CTX` for HMAC with its key set, used only as a template:
/// every tag works on a context of its own, so one key serves many threads at
/// once. Finished contexts are re-armed with `EVP_MAC_init` without a key,
/// which restarts from the key's inner pad state (and overwrites the last
/// tag's state), and kept in four lock-free slots: a tag costs no
/// duplicate, no allocation and no free, and two
/// threads tagging with one key take different slots without waiting for
/// each other (a lock here made two threads slower than one at 0.35 µs a
/// tag). Spares hold the same keyed state as the template and are freed
/// (cleansed) with it. Where libcrypto cannot restart a context without its
/// key (OpenSSL 3.0.0–3.0.2), no context is kept: every tag duplicates the
/// template.
final class KeyedMAC: @unchecked Sendable {
    /// Whether `EVP_MAC_init` without a key restarts a context from its key
    /// (tested once per process by the shim).
    static let restarts = tokenmint_hmac_restarts() == 1

    private let template: OpaquePointer
    /// Whether finished contexts are restarted and kept (``restarts``, unless
    /// a test asks for the path of a libcrypto that cannot).
    private let keepsContexts: Bool
    /// A kept context's address, or 0.
    private let spare0 = Atomic<UInt>(0)
    private let spare1 = Atomic<UInt>(0)
    private let spare2 = Atomic<UInt>(0)
    private let spare3 = Atomic<UInt>(0)

    init(key: SecureBytes, hash: HashFunction, keepsContexts: Bool = KeyedMAC.restarts) throws(TokenMintError) {
        // Never kept where libcrypto cannot restart a context (its tags would be wrong).
        self.keepsContexts = keepsContexts && Self.restarts
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw OpenSSL.failure("EVP_MAC_fetch HMAC") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw OpenSSL.failure("EVP_MAC_CTX_new") }
        template = context
        // OSSL_PARAM keeps both pointers, so both strings live in buffers
        // that outlast EVP_MAC_init (a literal passed directly would be a
        // temporary that is gone by then).
        var parameter = Array("digest".utf8CString)
        var digest = Array(hash.openSSLName.utf8CString)
        let ok = parameter.withUnsafeMutableBufferPointer { label in
            digest.withUnsafeMutableBufferPointer { name in
                var params = [
                    OSSL_PARAM_construct_utf8_string(label.baseAddress, name.baseAddress, 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withUnsafeBytes { k in
                    EVP_MAC_init(context, k.bytes, k.count, &params)
                }
            }
        }
        guard ok == 1 else { throw OpenSSL.failure("EVP_MAC_init HMAC-\(hash.name)") }
    }

    deinit {
        // Freeing cleanses the key schedule.
        EVP_MAC_CTX_free(template)
        for bits in [spare0.load(ordering: .acquiring), spare1.load(ordering: .acquiring),
                     spare2.load(ordering: .acquiring), spare3.load(ordering: .acquiring)] {
            if let spare = OpaquePointer(bitPattern: bits) { EVP_MAC_CTX_free(spare) }
        }
    }

    /// A kept context, taken out of its slot; nil when every slot is empty.
    private func takeSpare() -> OpaquePointer? {
        var bits = spare0.exchange(0, ordering: .acquiring)
        if bits == 0 { bits = spare1.exchange(0, ordering: .acquiring) }
        if bits == 0 { bits = spare2.exchange(0, ordering: .acquiring) }
        if bits == 0 { bits = spare3.exchange(0, ordering: .acquiring) }
        return OpaquePointer(bitPattern: bits)
    }

    /// Puts `context` in an empty slot; false when all four are taken.
    private func keep(_ context: OpaquePointer) -> Bool {
        let bits = UInt(bitPattern: context)
        return spare0.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged
            || spare1.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged
            || spare2.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged
            || spare3.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged
    }

    /// Writes the tag into `out` (at least 64 bytes) and returns its length, 0 on failure.
    func tag(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        // A kept context was re-armed when it was parked.
        guard let context = takeSpare() ?? EVP_MAC_CTX_dup(template) else { return 0 }
        var length = 0
        guard EVP_MAC_update(context, message.bytes, message.count) == 1,
            EVP_MAC_final(context, out.bytes, &length, out.count) == 1
        else {
            EVP_MAC_CTX_free(context)
            OpenSSL.clearErrors()
            return 0
        }
        // Re-armed before it is parked: the outer hash's final state (the tag
        // itself, which may be a secret: a PRF output, a PIN token) is
        // overwritten now, not when the context is next used.
        guard keepsContexts else {
            EVP_MAC_CTX_free(context)
            return length
        }
        guard EVP_MAC_init(context, nil, 0, nil) == 1 else {
            EVP_MAC_CTX_free(context)
            OpenSSL.clearErrors()
            return length
        }
        // All four slots taken (more than four tags at once): not an error.
        if !keep(context) { EVP_MAC_CTX_free(context) }
        return length
    }
}

/// Unkeyed HMAC contexts with the digest set, one per hash, for RFC 6979's
/// DRBG: the signer duplicates the template (no algorithm fetch per call),
/// keys the copy with `EVP_MAC_init` where the DRBG's key changes, and
/// restarts it without a key where a step keeps the key of the one before.
final class HMACTemplate: @unchecked Sendable {
    /// SHA-256/384/512, the hashes JOSE and WebAuthn sign with, made once.
    private static let prefetched: [HashFunction: HMACTemplate] = {
        var result: [HashFunction: HMACTemplate] = [:]
        for hash in [HashFunction.sha256, .sha384, .sha512] {
            if let template = HMACTemplate(hash) { result[hash] = template }
        }
        return result
    }()

    /// The template for `hash`: a prefetched one, or one fetched now for
    /// another hash (it lives as long as its caller keeps it).
    static func forHash(_ hash: HashFunction) throws(TokenMintError) -> HMACTemplate {
        guard let template = prefetched[hash] ?? HMACTemplate(hash) else { throw OpenSSL.failure("HMAC-\(hash.name) context") }
        return template
    }

    let context: OpaquePointer

    private init?(_ hash: HashFunction) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        var parameter = Array("digest".utf8CString)
        var digest = Array(hash.openSSLName.utf8CString)
        let ok = parameter.withUnsafeMutableBufferPointer { label in
            digest.withUnsafeMutableBufferPointer { name in
                var params = [OSSL_PARAM_construct_utf8_string(label.baseAddress, name.baseAddress, 0), OSSL_PARAM_construct_end()]
                return EVP_MAC_CTX_set_params(context, &params)
            }
        }
        guard ok == 1 else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit { EVP_MAC_CTX_free(context) }
}
