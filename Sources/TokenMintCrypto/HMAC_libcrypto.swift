import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of HMAC and HMACKey (the public API is in HMAC.swift and
// HMACKey.swift).

/// An `EVP_MAC_CTX` for HMAC with its key set, used only as a template:
/// every tag works on a duplicate, so one key serves many threads at once.
final class KeyedMAC: @unchecked Sendable {
    private let template: OpaquePointer

    init(key: SecureBytes, hash: HashFunction) throws(TokenMintError) {
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

    deinit { EVP_MAC_CTX_free(template) }  // cleanses the key schedule

    /// Writes the tag into `out` (at least 64 bytes) and returns its length, 0 on failure.
    func tag(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        guard let context = EVP_MAC_CTX_dup(template) else { return 0 }
        defer { EVP_MAC_CTX_free(context) }
        var length = 0
        guard EVP_MAC_update(context, message.bytes, message.count) == 1,
            EVP_MAC_final(context, out.bytes, &length, out.count) == 1
        else {
            OpenSSL.clearErrors()
            return 0
        }
        return length
    }
}
