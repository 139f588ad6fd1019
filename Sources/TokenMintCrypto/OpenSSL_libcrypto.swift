import TokenMintCore
internal import CLibCrypto
import Foundation

/// The one place where libcrypto return codes and its error queue become
/// `TokenMintError`s.
enum OpenSSL {
    /// Drains this thread's OpenSSL error queue into one line of text.
    static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if messages.count < 4 { messages.append(text) }
        }
        return messages.joined(separator: "; ")
    }

    /// Forgets any queued errors (after an expected failure, such as a bad signature).
    static func clearErrors() { ERR_clear_error() }

    /// The running libcrypto's version, as `OPENSSL_VERSION_NUMBER` spells
    /// it (0xMNN00PP0: 3.0.3 is 0x30000030).
    static var versionNumber: UInt { UInt(OpenSSL_version_num()) }

    /// A `TokenMintError` with OpenSSL's queued error text appended.
    static func error(_ code: TokenMintError.Code, _ what: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        let detail = drainErrors()
        return TokenMintError(code, detail.isEmpty ? what : "\(what) (OpenSSL: \(detail))", file: file, line: line)
    }

    static func failure(_ what: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        error(.crypto.libraryFailure, what, file: file, line: line)
    }

    // OSSL_KEYMGMT_SELECT_* values (openssl/core_dispatch.h).
    static let selectPrivate: Int32 = 0x01
    static let selectPublic: Int32 = 0x02
    static let selectKeyPair: Int32 = 0x87  // EVP_PKEY_KEYPAIR
    static let selectPublicKey: Int32 = 0x86  // EVP_PKEY_PUBLIC_KEY
}

/// An `EVP_KDF` fetched once: fetching costs a lock and a lookup per call,
/// and a fetched KDF may be used from any thread.
final class FetchedKDF: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ name: String) { pointer = EVP_KDF_fetch(nil, name, nil) }

    /// `EVP_KDF_derive` over `digest` with `key` (read in place), an optional
    /// `salt` and `info`: `count` bytes in zeroing memory. HKDF and SSKDF both.
    func derive(key: SecureBytes, digest: String, salt: [UInt8]?, info: [UInt8], count: Int, name: String) throws(TokenMintError) -> SecureBytes {
        guard let kdf = pointer else { throw OpenSSL.failure("EVP_KDF_fetch \(name)") }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw OpenSSL.failure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        // OSSL_PARAM keeps pointers: every buffer lives until EVP_KDF_derive returns.
        var names = (Array("digest".utf8CString), Array("key".utf8CString), Array("salt".utf8CString), Array("info".utf8CString))
        var digest = Array(digest.utf8CString)
        // An empty salt or info still needs a valid pointer; its length stays 0.
        let (saltCount, infoCount) = (salt?.count ?? 0, info.count)
        var saltBytes = salt.flatMap { $0.isEmpty ? nil : $0 } ?? [0]
        var info = info.isEmpty ? [0] : info
        return try SecureBytes(count: count) { (out) throws(TokenMintError) in
            let ok = key.withUnsafeBytes { key in
                names.0.withUnsafeMutableBufferPointer { n0 in
                    names.1.withUnsafeMutableBufferPointer { n1 in
                        names.2.withUnsafeMutableBufferPointer { n2 in
                            names.3.withUnsafeMutableBufferPointer { n3 in
                                digest.withUnsafeMutableBufferPointer { d in
                                    saltBytes.withUnsafeMutableBytes { s in
                                        info.withUnsafeMutableBytes { i in
                                            var params = [
                                                OSSL_PARAM_construct_utf8_string(n0.baseAddress, d.baseAddress, 0),
                                                OSSL_PARAM_construct_octet_string(n1.baseAddress, UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                                            ]
                                            if salt != nil { params.append(OSSL_PARAM_construct_octet_string(n2.baseAddress, s.baseAddress, saltCount)) }
                                            params.append(OSSL_PARAM_construct_octet_string(n3.baseAddress, i.baseAddress, infoCount))
                                            params.append(OSSL_PARAM_construct_end())
                                            return EVP_KDF_derive(context, out.bytes, out.count, &params)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            guard ok == 1 else { throw OpenSSL.failure("EVP_KDF_derive \(name)") }
        }
    }
}

/// Ownership of one `EVP_PKEY`. OpenSSL 3 keys are immutable after creation
/// and reference-counted atomically, so one key may sign and verify from many
/// threads at once.
final class PKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// What a kept digest context was set up for: the operation, the hash
    /// and the padding. Only a context of the same kind is reused.
    struct ContextKind: Hashable {
        var verifies: Bool
        var hash: HashFunction
        var setup: ContextSetup
    }

    /// The padding a kept context was configured with.
    enum ContextSetup: Hashable {
        case ecdsa
        case rsa(RSA.Padding)
        /// An RSA-OAEP key context (no digest context), for encryption or decryption.
        case oaep(encrypts: Bool)
    }

    /// Contexts kept by kind, at most ``PKey/maximumSpares``.
    final class SparePool: Sendable {
        private let spares = Locked<[(kind: ContextKind, context: OpaquePointer)]>([])

        /// The kept context of `kind`, taken out of the pool.
        func take(_ kind: ContextKind) -> OpaquePointer? {
            spares.withLock { list in list.lastIndex { $0.kind == kind }.map { list.remove(at: $0).context } }
        }

        /// Keeps `context` for the next call of `kind`; false when the pool is full.
        func keep(_ context: OpaquePointer, _ kind: ContextKind) -> Bool {
            spares.withLock { list in
                guard list.count < PKey.maximumSpares else { return false }
                list.append((kind, context))
                return true
            }
        }

        /// Every kept context, taken out.
        func drain() -> [OpaquePointer] {
            spares.withLock { list in
                defer { list = [] }
                return list.map(\.context)
            }
        }
    }

    /// Digest contexts that signed or verified with this key, kept for the
    /// next call of their kind: re-initialised with no key
    /// (`EVP_DigestSignInit_ex`/`EVP_DigestVerifyInit_ex` keep the key and
    /// reset the state), they skip creating a key context and fetching the
    /// signature algorithm. Each runs with `EVP_MD_CTX_FLAG_FINALISE`, so
    /// the final step does not duplicate the key context either.
    private let digestSpares = SparePool()
    /// Key contexts (`EVP_PKEY_CTX`) kept the same way: an
    /// `EVP_PKEY_encrypt`/`EVP_PKEY_decrypt` leaves its context ready for the next.
    private let keySpares = SparePool()
    /// More callers than this at once with one key make fresh contexts.
    static let maximumSpares = 8

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit {
        for context in digestSpares.drain() { EVP_MD_CTX_free(context) }  // each holds a reference to the key
        for context in keySpares.drain() { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_free(pointer)
    }

    /// Runs `body` on a key context for `kind`: a kept one, or a new one that
    /// `setUp` prepares. The context is kept again when `body` succeeds and
    /// freed when it throws.
    func withKeyContext<R>(
        _ kind: ContextKind, setUp: (OpaquePointer) -> Bool, _ body: (OpaquePointer) throws(TokenMintError) -> R
    ) throws(TokenMintError) -> R {
        let context: OpaquePointer
        if let kept = keySpares.take(kind) {
            context = kept
        } else {
            guard let fresh = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw OpenSSL.failure("EVP_PKEY_CTX_new_from_pkey") }
            guard setUp(fresh) else {
                EVP_PKEY_CTX_free(fresh)
                throw OpenSSL.failure("key context set-up")
            }
            context = fresh
        }
        let result: R
        do { result = try body(context) } catch {
            EVP_PKEY_CTX_free(context)
            throw error
        }
        if !keySpares.keep(context, kind) { EVP_PKEY_CTX_free(context) }
        return result
    }

    /// A digest context for `kind`, set up for this key with `hash`, and the
    /// key context to configure; nil when OpenSSL refuses.
    private func digestContext(
        _ kind: ContextKind?, verifies: Bool, hash: HashFunction?
    ) -> (md: OpaquePointer, pkey: OpaquePointer)? {
        var pkeyContext: OpaquePointer? = nil
        if let kind, let spare = digestSpares.take(kind) {
            let name = kind.hash.openSSLName
            let status = verifies
                ? EVP_DigestVerifyInit_ex(spare, &pkeyContext, name, nil, nil, nil, nil)
                : EVP_DigestSignInit_ex(spare, &pkeyContext, name, nil, nil, nil, nil)
            if status == 1, let pkeyContext { return (spare, pkeyContext) }
            EVP_MD_CTX_free(spare)
            OpenSSL.clearErrors()
            pkeyContext = nil
        }
        guard let fresh = EVP_MD_CTX_new() else { return nil }
        if kind != nil { EVP_MD_CTX_set_flags(fresh, EVP_MD_CTX_FLAG_FINALISE) }
        let status = verifies
            ? EVP_DigestVerifyInit_ex(fresh, &pkeyContext, hash?.openSSLName, nil, nil, pointer, nil)
            : EVP_DigestSignInit_ex(fresh, &pkeyContext, hash?.openSSLName, nil, nil, pointer, nil)
        guard status == 1, let pkeyContext else {
            EVP_MD_CTX_free(fresh)
            return nil
        }
        return (fresh, pkeyContext)
    }

    /// Keeps `context` for the next call of `kind`, or frees it.
    private func recycle(_ context: OpaquePointer, _ kind: ContextKind?) {
        if !(kind.map { digestSpares.keep(context, $0) } ?? false) { EVP_MD_CTX_free(context) }
    }

    /// The key type name: "ED25519", "EC", "RSA", ...
    var typeName: String {
        if EVP_PKEY_is_a(pointer, "EC") == 1 { return "EC" }
        if EVP_PKEY_is_a(pointer, "RSA") == 1 { return "RSA" }
        if EVP_PKEY_is_a(pointer, "RSA-PSS") == 1 { return "RSA-PSS" }
        if EVP_PKEY_is_a(pointer, "ED25519") == 1 { return "ED25519" }
        if EVP_PKEY_is_a(pointer, "ED448") == 1 { return "ED448" }
        return "unknown"
    }

    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }
    var maximumSignatureSize: Int { Int(EVP_PKEY_get_size(pointer)) }

    var hasPrivateKey: Bool {
        // A public-only key has no "priv" parameter to report.
        if typeName == "EC" { return hasParameter(OSSL_PKEY_PARAM_PRIV_KEY) }
        if typeName == "RSA" || typeName == "RSA-PSS" { return hasParameter(OSSL_PKEY_PARAM_RSA_D) }
        var length = 0
        return EVP_PKEY_get_raw_private_key(pointer, nil, &length) == 1 && length > 0
    }

    // MARK: - Decoding and encoding

    enum Format {
        case pem, der

        /// OpenSSL keeps the type name pointer inside its encoder and decoder
        /// contexts, so it must outlive them: a static string does.
        var name: StaticString {
            switch self {
            case .pem: "PEM"
            case .der: "DER"
            }
        }
        var rawValue: String { "\(name)" }
    }

    static func decode(_ bytes: [UInt8], format: Format, keyType: String, wantPrivate: Bool) throws(TokenMintError) -> PKey {
        let result: Result<PKey, TokenMintError> = bytes.withUnsafeBytes { buffer in
            do throws(TokenMintError) {
                return .success(try decode(buffer, format: format, keyType: keyType, wantPrivate: wantPrivate))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Decodes a PEM or DER key of `keyType` with OpenSSL's decoders.
    /// `wantPrivate` asks for a key pair; otherwise a public key (a private key
    /// encoding also yields its public half).
    static func decode(
        _ bytes: UnsafeRawBufferPointer, format: Format, keyType: String, wantPrivate: Bool
    ) throws(TokenMintError) -> PKey {
        guard bytes.count > 0, bytes.count <= 64 * 1024 else {
            throw TokenMintError(.crypto.invalidEncoding, "\(format.rawValue) key: empty or larger than 64 KiB")
        }
        if format == .pem, containsEncryptedPEM(bytes) {
            throw TokenMintError(.crypto.unsupportedAlgorithm, "encrypted PEM private keys are not supported; decrypt the key first")
        }
        if format == .pem { try checkStrictPEM(bytes) }
        // Some decoders (Ed25519 PKCS#8) only answer a key-pair request, so a
        // public request that fails is retried as one: a private key
        // encoding then yields its public half.
        let selections = wantPrivate ? [OpenSSL.selectKeyPair] : [OpenSSL.selectPublicKey, OpenSSL.selectKeyPair]
        var lastError: TokenMintError? = nil
        for selection in selections {
            do throws(TokenMintError) {
                return try decode(bytes, format: format, keyType: keyType, selection: selection, wantPrivate: wantPrivate)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TokenMintError(.crypto.invalidKey, "not a valid key")
    }

    private static func decode(
        _ bytes: UnsafeRawBufferPointer, format: Format, keyType: String, selection: Int32, wantPrivate: Bool
    ) throws(TokenMintError) -> PKey {
        var key: OpaquePointer? = nil
        guard let context = OSSL_DECODER_CTX_new_for_pkey(&key, format.name.cString, nil, nil, selection, nil, nil)
        else { throw OpenSSL.failure("OSSL_DECODER_CTX_new_for_pkey") }
        defer { OSSL_DECODER_CTX_free(context) }
        // Never prompt on a terminal: an encrypted key simply fails to decode.
        _ = OSSL_DECODER_CTX_set_passphrase(context, "", 0)
        var cursor: UnsafePointer<UInt8>? = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var remaining = bytes.count
        let ok = OSSL_DECODER_from_data(context, &cursor, &remaining)
        guard ok == 1, let decoded = key else {
            let kind = wantPrivate ? "private" : "public"
            throw OpenSSL.error(.crypto.invalidKey, "not a valid \(format.rawValue) \(kind) \(keyType) key")
        }
        let result = PKey(taking: decoded)
        guard result.typeName == keyType else {
            throw TokenMintError(.crypto.invalidKey, "expected a \(keyType) key, got \(result.typeName)")
        }
        if format == .der, remaining != 0 {
            throw TokenMintError(.crypto.invalidEncoding, "DER key: \(remaining) trailing bytes")
        }
        OpenSSL.clearErrors()
        return result
    }

    /// OpenSSL's PEM reader takes the first block and ignores what follows
    /// it, and decodes a DER body with bytes after the key. A key file is one
    /// block and nothing else: one BEGIN line, base64, one END line with the
    /// same label, whitespace around it at most, and a body that is exactly
    /// one DER SEQUENCE.
    static func checkStrictPEM(_ bytes: UnsafeRawBufferPointer) throws(TokenMintError) {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count >= 3, let first = lines.first, let last = lines.last,
            first.hasPrefix("-----BEGIN "), first.hasSuffix("-----"), last.hasPrefix("-----END "), last.hasSuffix("-----"),
            first.dropFirst(11).dropLast(5) == last.dropFirst(9).dropLast(5)
        else { throw TokenMintError(.crypto.invalidEncoding, "PEM: one BEGIN line, base64 lines and a matching END line, nothing else") }
        let body = lines.dropFirst().dropLast()
        guard !body.contains(where: { $0.hasPrefix("-----") }) else {
            throw TokenMintError(.crypto.invalidEncoding, "PEM: more than one block")
        }
        // Legacy encrypted PEM headers (Proc-Type, DEK-Info) are refused above;
        // any other header line is not base64 and fails here.
        guard let der = Data(base64Encoded: body.joined()) else { throw TokenMintError(.crypto.invalidEncoding, "PEM: the body is not base64") }
        let derBytes = [UInt8](der)
        guard derBytes.count >= 2, derBytes[0] == 0x30 else { throw TokenMintError(.crypto.invalidEncoding, "PEM: the body is not a DER SEQUENCE") }
        var length = Int(derBytes[1])
        var header = 2
        if length & 0x80 != 0 {
            let octets = length & 0x7f
            guard (1...3).contains(octets), derBytes.count >= 2 + octets else { throw TokenMintError(.crypto.invalidEncoding, "PEM: bad DER length") }
            length = derBytes[2..<2 + octets].reduce(0) { $0 << 8 | Int($1) }
            header += octets
        }
        guard header + length == derBytes.count else {
            throw TokenMintError(.crypto.invalidEncoding, "PEM: \(derBytes.count - header - length) bytes after the DER key")
        }
    }

    private static func containsEncryptedPEM(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let marker = Array("ENCRYPTED".utf8)
        guard bytes.count >= marker.count else { return false }
        for start in 0...(bytes.count - marker.count)
        where bytes[start] == marker[0] && bytes[start..<start + marker.count].elementsEqual(marker) {
            return true
        }
        return false
    }

    /// Encodes with OpenSSL's encoders. `structure` is "PrivateKeyInfo"
    /// (PKCS#8), "SubjectPublicKeyInfo" or "type-specific" (SEC1, PKCS#1).
    func encode(format: Format, structure: StaticString, privatePart: Bool) throws(TokenMintError) -> [UInt8] {
        let selection = privatePart ? OpenSSL.selectKeyPair : OpenSSL.selectPublicKey
        guard let context = OSSL_ENCODER_CTX_new_for_pkey(pointer, selection, format.name.cString, structure.cString, nil) else {
            throw OpenSSL.failure("OSSL_ENCODER_CTX_new_for_pkey")
        }
        defer { OSSL_ENCODER_CTX_free(context) }
        var data: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        guard OSSL_ENCODER_to_data(context, &data, &length) == 1, let data else {
            throw OpenSSL.failure("cannot encode the key as \(format.rawValue) \(structure)")
        }
        defer {
            OPENSSL_cleanse(data, length)
            CRYPTO_free(data, nil, 0)
        }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    func encodePEM(structure: StaticString, privatePart: Bool) throws(TokenMintError) -> String {
        let bytes = try encode(format: .pem, structure: structure, privatePart: privatePart)
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Parameters

    /// A big-endian unsigned parameter, or nil when the key has none.
    func bignumParameter(_ name: UnsafePointer<CChar>) -> [UInt8]? {
        withBignumParameter(name) { BigNum.bytes($0) } ?? nil
    }

    /// A secret BIGNUM parameter (d, a prime, a CRT value), big-endian and
    /// left-padded to `width` bytes, written straight into zeroing memory.
    func secretParameter(_ name: UnsafePointer<CChar>, paddedTo width: Int = 0) -> SecureBytes? {
        withBignumParameter(name) { bn -> SecureBytes? in
            let count = max(width, Int((BN_num_bits(bn) + 7) / 8))
            var ok = false
            let bytes = SecureBytes(count: count) { out in
                ok = BN_bn2binpad(bn, out.bytes, Int32(count)) == Int32(count)
            }
            return ok ? bytes : nil
        } ?? nil
    }

    /// Whether the key holds the BIGNUM parameter `name`; its value is never copied out.
    func hasParameter(_ name: UnsafePointer<CChar>) -> Bool {
        withBignumParameter(name) { _ in true } ?? false
    }

    /// Calls `body` with the parameter as a BIGNUM, cleared and freed afterwards; nil when absent.
    private func withBignumParameter<R>(_ name: UnsafePointer<CChar>, _ body: (OpaquePointer) -> R) -> R? {
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pointer, name, &bn) == 1, let bn else {
            OpenSSL.clearErrors()
            return nil
        }
        defer { BN_clear_free(bn) }
        return body(bn)
    }

    func octetParameter(_ name: UnsafePointer<CChar>) -> [UInt8]? {
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pointer, name, nil, 0, &length) == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        var out = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_octet_string_param(pointer, name, &out, length, &length) == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        return Array(out.prefix(length))
    }

    func stringParameter(_ name: UnsafePointer<CChar>) -> String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, name, &buffer, buffer.count, &length) == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Builds a key from OSSL_PARAMs (`fromdata`).
    static func fromParameters(
        keyType: StaticString, privatePart: Bool, build: (ParameterBuilder) throws(TokenMintError) -> Void
    ) throws(TokenMintError) -> PKey {
        let builder = try ParameterBuilder()
        try build(builder)
        guard let params = OSSL_PARAM_BLD_to_param(builder.pointer) else { throw OpenSSL.failure("OSSL_PARAM_BLD_to_param") }
        defer { OSSL_PARAM_free(params) }
        let context = try PKey.context(keyType)
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, privatePart ? OpenSSL.selectKeyPair : OpenSSL.selectPublicKey, params) == 1,
            let key
        else { throw OpenSSL.error(.crypto.invalidKey, "invalid \(keyType) key parameters") }
        return PKey(taking: key)
    }

    /// A new `EVP_PKEY_CTX` for a key type (OpenSSL keeps the name pointer).
    static func context(_ keyType: StaticString) throws(TokenMintError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, keyType.cString, nil) else {
            throw OpenSSL.failure("EVP_PKEY_CTX_new_from_name \(keyType)")
        }
        return context
    }

    /// Runs OpenSSL's consistency checks: the public part (point on the curve,
    /// RSA modulus sanity) and, for key pairs, that the halves match.
    func check(privatePart: Bool) throws(TokenMintError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw OpenSSL.failure("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(context) }
        // On the curves TokenMint takes (P-256/384/521, secp256k1: cofactor 1)
        // a point on the curve has the group's order, so the quick check (range
        // and curve equation) is the whole check; the full one adds n·Q = O, a
        // scalar multiplication that cannot fail there.
        let checked = typeName == "EC" ? EVP_PKEY_public_check_quick(context) : EVP_PKEY_public_check(context)
        guard checked == 1 else {
            throw OpenSSL.error(.crypto.invalidKey, "public key fails validation")
        }
        if privatePart {
            guard EVP_PKEY_pairwise_check(context) == 1 else {
                throw OpenSSL.error(.crypto.invalidKey, "private key does not match its public key")
            }
        }
    }

    // MARK: - Signing

    /// `EVP_DigestSign` with an optional hash and padding set-up. With
    /// `reuse` (and a hash), the digest context is kept for the next
    /// signature of the same set-up; `configure` runs on every use.
    func sign(
        _ message: UnsafeRawBufferPointer, hash: HashFunction?, reuse setup: ContextSetup? = nil,
        configure: (OpaquePointer) -> Bool = { _ in true }
    ) throws(TokenMintError) -> [UInt8] {
        let kind = hash.flatMap { hash in setup.map { ContextKind(verifies: false, hash: hash, setup: $0) } }
        guard let (mdContext, pkeyContext) = digestContext(kind, verifies: false, hash: hash) else {
            throw OpenSSL.failure("cannot start signing")
        }
        guard configure(pkeyContext) else {
            EVP_MD_CTX_free(mdContext)
            throw OpenSSL.failure("cannot start signing")
        }
        var length = maximumSignatureSize
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(mdContext, &signature, &length, message.baseAddress, message.count) == 1 else {
            EVP_MD_CTX_free(mdContext)
            throw OpenSSL.failure("signing failed")
        }
        recycle(mdContext, kind)
        if length < signature.count { signature.removeLast(signature.count - length) }
        return signature
    }

    /// `EVP_DigestVerify`: true only for a valid signature; every failure
    /// (malformed, wrong key, wrong padding) is `false`. `reuse` as for ``sign(_:hash:reuse:configure:)``.
    func verify(
        _ signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, hash: HashFunction?,
        reuse setup: ContextSetup? = nil, configure: (OpaquePointer) -> Bool = { _ in true }
    ) -> Bool {
        let kind = hash.flatMap { hash in setup.map { ContextKind(verifies: true, hash: hash, setup: $0) } }
        guard let (mdContext, pkeyContext) = digestContext(kind, verifies: true, hash: hash) else {
            OpenSSL.clearErrors()
            return false
        }
        guard configure(pkeyContext) else {
            EVP_MD_CTX_free(mdContext)
            OpenSSL.clearErrors()
            return false
        }
        let result = EVP_DigestVerify(
            mdContext, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        // A signature that does not verify leaves the context as reusable as one that does.
        if result != 1 { OpenSSL.clearErrors() }
        recycle(mdContext, kind)
        return result == 1
    }
}

/// An `OSSL_PARAM_BLD` that owns the BIGNUMs pushed into it: OpenSSL keeps
/// pointers to them until `OSSL_PARAM_BLD_to_param`, so they are freed (and
/// cleared) only when the builder goes away.
final class ParameterBuilder {
    let pointer: OpaquePointer
    private var owned: [OpaquePointer] = []
    private var strings: [[CChar]] = []
    private var octets: [[UInt8]] = []
    private var names: [UnsafeMutablePointer<CChar>] = []

    /// A C copy of a parameter name: the builder keeps the name pointer too.
    private func name(_ text: String) throws(TokenMintError) -> UnsafeMutablePointer<CChar> {
        guard let copy = strdup(text) else { throw TokenMintError(.crypto.libraryFailure, "out of memory") }
        names.append(copy)
        return copy
    }

    init() throws(TokenMintError) {
        guard let pointer = OSSL_PARAM_BLD_new() else { throw OpenSSL.failure("OSSL_PARAM_BLD_new") }
        self.pointer = pointer
    }

    deinit {
        OSSL_PARAM_BLD_free(pointer)
        owned.forEach { BN_clear_free($0) }
        for index in octets.indices { OPENSSL_cleanse(&octets[index], octets[index].count) }
        names.forEach { free($0) }
    }

    func push(_ name: String, bignum bytes: [UInt8]) throws(TokenMintError) {
        try push(name, taking: try BigNum.make(bytes))
    }

    /// Pushes a secret number read in place from secure memory.
    func push(_ name: String, secret: SecureBytes) throws(TokenMintError) {
        try push(name, taking: try BigNum.make(secret: secret))
    }

    /// Pushes `bn`, which the builder now owns (cleared and freed with it).
    func push(_ name: String, taking bn: OpaquePointer) throws(TokenMintError) {
        owned.append(bn)
        guard OSSL_PARAM_BLD_push_BN(pointer, try self.name(name), bn) == 1 else { throw OpenSSL.failure("OSSL_PARAM_BLD_push_BN \(name)") }
    }

    func push(_ name: String, string: String) throws(TokenMintError) {
        strings.append(Array(string.utf8CString))
        let key = try self.name(name)
        let ok = strings[strings.count - 1].withUnsafeBufferPointer { buffer in
            OSSL_PARAM_BLD_push_utf8_string(pointer, key, buffer.baseAddress, 0)
        }
        guard ok == 1 else { throw OpenSSL.failure("OSSL_PARAM_BLD_push_utf8_string \(name)") }
    }

    func push(_ name: String, octets bytes: [UInt8]) throws(TokenMintError) {
        octets.append(bytes)
        let key = try self.name(name)
        let ok = octets[octets.count - 1].withUnsafeBytes { buffer in
            OSSL_PARAM_BLD_push_octet_string(pointer, key, buffer.baseAddress, buffer.count)
        }
        guard ok == 1 else { throw OpenSSL.failure("OSSL_PARAM_BLD_push_octet_string \(name)") }
    }
}

extension StaticString {
    /// The literal as a C string: static, NUL-terminated, never freed.
    var cString: UnsafePointer<CChar> {
        UnsafeRawPointer(utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

/// BIGNUM helpers.
enum BigNum {
    /// The minimal big-endian bytes of `bn` (empty for zero).
    static func bytes(_ bn: OpaquePointer) -> [UInt8] {
        let count = Int((BN_num_bits(bn) + 7) / 8)
        var out = [UInt8](repeating: 0, count: count)
        _ = BN_bn2bin(bn, &out)
        return out
    }

    /// `bn` as exactly `count` big-endian bytes, or nil when it does not fit.
    static func bytes(_ bn: OpaquePointer, paddedTo count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        guard BN_bn2binpad(bn, &out, Int32(count)) == Int32(count) else { return nil }
        return out
    }

    /// A new BIGNUM from big-endian bytes; the caller frees it.
    static func make(_ bytes: some Collection<UInt8>) throws(TokenMintError) -> OpaquePointer {
        let array = Array(bytes)
        guard let bn = BN_bin2bn(array, Int32(array.count), nil) else { throw OpenSSL.failure("BN_bin2bn") }
        return bn
    }

    /// A new constant-time BIGNUM from a secret read in place (no copy in
    /// ordinary memory); the caller frees it with `BN_clear_free`.
    static func make(secret: SecureBytes) throws(TokenMintError) -> OpaquePointer {
        try secret.withUnsafeBytes { (bytes) throws(TokenMintError) in try make(secret: bytes) }
    }

    /// As above, from a buffer the caller keeps safe.
    static func make(secret bytes: UnsafeRawBufferPointer) throws(TokenMintError) -> OpaquePointer {
        guard let bn = BN_bin2bn(bytes.bytes, Int32(bytes.count), nil) else { throw OpenSSL.failure("BN_bin2bn") }
        BN_set_flags(bn, BN_FLG_CONSTTIME)
        return bn
    }
}

/// Lexicographic comparison of equal-length big-endian numbers.
func compareBigEndian(_ lhs: some Sequence<UInt8>, _ rhs: some Sequence<UInt8>) -> Int {
    for (a, b) in zip(lhs, rhs) where a != b { return a < b ? -1 : 1 }
    return 0
}
