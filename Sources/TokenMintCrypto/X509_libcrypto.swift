import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of X509Certificate (the public API is in
// X509Certificate.swift).

extension X509Certificate {
    /// Ownership of one `X509`.
    final class Box: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { X509_free(pointer) }
    }

    /// `d2i_X509`; all bytes must belong to the certificate.
    static func openSSLParse(_ der: [UInt8]) throws(TokenMintError) -> Box {
        var cursor: UnsafePointer<UInt8>? = nil
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            if let base = buffer.baseAddress, let end = cursor, end - base != buffer.count {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else { throw OpenSSL.error(.crypto.invalidEncoding, "not a DER certificate (or trailing bytes)") }
        return Box(parsed)
    }

    /// `EVP_DigestVerify` with the certificate's key (no digest for EdDSA).
    func openSSLIsValidSignature(_ signature: [UInt8], for message: [UInt8], hash: HashFunction) -> Bool {
        guard let key = X509_get0_pubkey(box.pointer), EVP_PKEY_up_ref(key) == 1 else { return false }
        let pkey = PKey(taking: key)
        let isEdwards = pkey.typeName == "ED25519" || pkey.typeName == "ED448"
        return signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in pkey.verify(s, message: m, hash: isEdwards ? nil : hash) }
        }
    }

    /// The curve of an EC key ("prime256v1", …), nil for any other key.
    var openSSLCurveName: String? {
        guard let key = X509_get0_pubkey(box.pointer), EVP_PKEY_is_a(key, "EC") == 1 else { return nil }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1, length < name.count else { return nil }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The extension `oid`'s value bytes (`X509_get_ext_by_OBJ`).
    func openSSLExtensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(box.pointer, object, -1)
        guard index >= 0, let ext = X509_get_ext(box.pointer, index), let data = X509_EXTENSION_get_data(ext),
            let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        let length = Int(ASN1_STRING_length(data))
        guard length >= 0 else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// The EC public point, uncompressed (`04 ‖ x ‖ y`); nil for any other key.
    var openSSLEncodedPublicKey: [UInt8]? {
        guard let key = X509_get0_pubkey(box.pointer), EVP_PKEY_is_a(key, "EC") == 1 else { return nil }
        var point = [UInt8](repeating: 0, count: 160)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, &point, point.count, &length) == 1,
            length <= point.count
        else {
            OpenSSL.clearErrors()
            return nil
        }
        return Array(point.prefix(length))
    }

    /// The SubjectPublicKeyInfo DER (`i2d_PUBKEY`).
    var openSSLSubjectPublicKeyInfo: [UInt8]? {
        guard let key = X509_get0_pubkey(box.pointer) else { return nil }
        let length = i2d_PUBKEY(key, nil)
        guard length > 0, length <= 64 * 1024 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? bytes : nil
    }

    /// The raw public key of an Edwards key of `type` ("ED25519", "ED448").
    func openSSLRawEdwardsKey(type: String) -> [UInt8]? {
        guard let key = X509_get0_pubkey(box.pointer), EVP_PKEY_is_a(key, type) == 1 else { return nil }
        var raw = [UInt8](repeating: 0, count: 57)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        return Array(raw.prefix(length))
    }

    /// `X509_get_version` + 1.
    var openSSLVersion: Int { Int(X509_get_version(box.pointer)) + 1 }

    /// The number of attributes in the subject name (-1 without a subject).
    var openSSLSubjectEntryCount: Int {
        guard let subject = X509_get_subject_name(box.pointer) else { return -1 }
        return Int(X509_NAME_entry_count(subject))
    }

    /// `X509_check_host` with partial wildcards refused.
    func openSSLMatches(hostname: String) -> Bool {
        guard !hostname.isEmpty, hostname.utf8.count <= 253 else { return false }
        let result = X509_check_host(box.pointer, hostname, hostname.utf8.count, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS), nil)
        OpenSSL.clearErrors()
        return result == 1
    }

    /// `X509_verify_cert` against a store of `roots` with `intermediates` as
    /// untrusted certificates.
    /// The certificate's key, encoded by OpenSSL as a PEM SubjectPublicKeyInfo.
    func openSSLPublicKeyPEM() throws(TokenMintError) -> String {
        guard let key = X509_get0_pubkey(box.pointer), EVP_PKEY_up_ref(key) == 1 else {
            throw OpenSSL.error(.crypto.invalidKey, "the certificate's public key cannot be read")
        }
        return try PKey(taking: key).encodePEM(structure: "SubjectPublicKeyInfo", privatePart: false)
    }

    /// `X509_cmp_time` against both ends of the validity period (nil: now).
    func openSSLIsValid(at time: Int64?) -> Bool {
        guard let notBefore = X509_get0_notBefore(box.pointer), let notAfter = X509_get0_notAfter(box.pointer) else { return false }
        guard let time else { return X509_cmp_time(notBefore, nil) == -1 && X509_cmp_time(notAfter, nil) == 1 }
        var moment = time_t(time)
        return X509_cmp_time(notBefore, &moment) == -1 && X509_cmp_time(notAfter, &moment) == 1
    }

    func openSSLChains(to roots: [X509Certificate], through intermediates: [X509Certificate], at time: Int64?) -> Bool {
        guard !roots.isEmpty, let store = X509_STORE_new() else { return false }
        defer { X509_STORE_free(store) }
        for root in roots where X509_STORE_add_cert(store, root.box.pointer) != 1 { return false }
        guard let context = X509_STORE_CTX_new() else { return false }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = OPENSSL_sk_new_null() else { return false }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates { _ = OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.box.pointer)) }
        guard X509_STORE_CTX_init(context, store, box.pointer, untrusted) == 1 else { return false }
        if let time { X509_STORE_CTX_set_time(context, 0, time_t(time)) }
        let result = X509_verify_cert(context)
        OpenSSL.clearErrors()
        return result == 1
    }
}
