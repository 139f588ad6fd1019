public import TokenMintCore
public import TokenMintCrypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a JWE decryption accepts.
public struct JWEPolicy: Sendable {
    /// The key management algorithms accepted; nil: any the key admits.
    public var algorithms: Set<JWEAlgorithm>?
    /// The content encryption algorithms accepted; nil: all of them.
    public var encryptions: Set<JWEEncryption>?
    /// The largest serialized JWE read (default 1 MiB).
    public var maximumBytes: Int
    /// Header names this caller understands when `crit` lists them.
    public var understoodCritical: Set<String>
    /// The most recipients a JWE may list (default 8): each tried costs a private-key operation.
    public var maximumRecipients: Int

    /// A policy; by default any algorithm the key admits, 1 MiB, no `crit` extensions.
    public init(
        algorithms: Set<JWEAlgorithm>? = nil, encryptions: Set<JWEEncryption>? = nil, maximumBytes: Int = JWE.defaultMaximumBytes,
        understoodCritical: Set<String> = [], maximumRecipients: Int = 8
    ) {
        self.algorithms = algorithms
        self.encryptions = encryptions
        self.maximumBytes = maximumBytes
        self.understoodCritical = understoodCritical
        self.maximumRecipients = maximumRecipients
    }
}

extension JWE {
    /// A recipient to encrypt to: a public key (or a symmetric key), the
    /// algorithm, and header members of its own.
    public struct RecipientKey: Sendable {
        /// The key: RSA or EC/X25519 public (or private) keys, `oct` keys.
        public var key: JWK
        /// The key management algorithm.
        public var algorithm: JWEAlgorithm
        /// More header members for this recipient (`kid` is added from the key when it has one; `apu`/`apv` feed ECDH-ES).
        public var header: JSONObject

        /// A recipient.
        public init(key: JWK, algorithm: JWEAlgorithm, header: JSONObject = JSONObject()) {
            self.key = key
            self.algorithm = algorithm
            self.header = header
        }
    }

    /// The plaintext of a decrypted JWE and what it was sent under.
    public struct Decrypted: Sendable {
        /// The header the recipient saw (protected, shared and its own, merged).
        public let header: JSONObject
        /// The key management algorithm.
        public let algorithm: JWEAlgorithm
        /// The content encryption algorithm.
        public let encryption: JWEEncryption
        /// Which recipient the key opened.
        public let recipientIndex: Int
        /// The plaintext, in zeroing memory.
        public let plaintext: SecureBytes

        /// For a nested JWT (`cty` "JWT", RFC 7519 §5.2), the inner token's text, to verify next.
        public var nestedToken: String? {
            guard header["cty"]?.stringValue?.uppercased() == "JWT" else { return nil }
            return plaintext.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The default algorithm for a key: its `alg` when that names a JWE
    /// algorithm, else RSA-OAEP-256 (RSA), ECDH-ES+A256KW (EC, X25519), A*KW (oct by length).
    public static func defaultAlgorithm(for key: JWK) throws(TokenMintError) -> JWEAlgorithm {
        if let name = key.algorithmName {
            guard let algorithm = JWEAlgorithm(name: name) else {
                if JWEEncryption(name: name) != nil { return .dir }
                throw TokenMintError(.jose.algorithmNotAllowed, "\(key) is for \(name), not a JWE algorithm")
            }
            return algorithm
        }
        switch key.material {
        case .rsaPublic, .rsaPrivate: return .RSA_OAEP_256
        case .ecPublic, .ecPrivate, .x25519Public, .x25519Private: return .ECDH_ES_A256KW
        case .secret(let s):
            switch s.bytes.count {
            case 16: return .A128KW
            case 24: return .A192KW
            case 32: return .A256KW
            default: throw TokenMintError(.jose.algorithmNotAllowed, "no JWE algorithm for a \(s.bytes.count)-byte oct key without \"alg\"")
            }
        default: throw TokenMintError(.jose.algorithmNotAllowed, "\(key) cannot encrypt")
        }
    }

    /// Encrypts `plaintext` to one key; every header member is protected, so
    /// the result has a compact form.
    /// - Parameters:
    ///   - plaintext: the content (a nested JWT, JSON, any bytes).
    ///   - key: the recipient's public key, or the shared `oct` key.
    ///   - algorithm: the key management algorithm (default: ``defaultAlgorithm(for:)``).
    ///   - encryption: the content encryption algorithm.
    ///   - header: more protected members (`typ`, `cty`, `kid`, `apu`, `apv`, …).
    public static func encrypt(
        _ plaintext: some DataProtocol, key: JWK, algorithm: JWEAlgorithm? = nil, encryption: JWEEncryption = .A256GCM,
        header: JSONObject = JSONObject()
    ) throws(TokenMintError) -> JWE {
        let chosen: JWEAlgorithm
        if let algorithm { chosen = algorithm } else { chosen = try defaultAlgorithm(for: key) }
        let recipient = RecipientKey(key: key, algorithm: chosen)
        return try encrypt(plaintext, to: [recipient], encryption: encryption, header: header)
    }

    /// Encrypts `plaintext` to one or more recipients (RFC 7516 §5.1). With
    /// one recipient its members go into the protected header; with several,
    /// each recipient's `alg`, `kid` and key management members go into its
    /// own unprotected header and `enc` stays protected.
    /// - Throws: `.jose.algorithmNotAllowed` when a key does not admit its
    ///   algorithm, or a direct algorithm (`dir`, `ECDH-ES`) has company.
    public static func encrypt(
        _ plaintext: some DataProtocol, to recipientKeys: [RecipientKey], encryption: JWEEncryption,
        header: JSONObject = JSONObject(), unprotectedHeader: JSONObject? = nil, additionalData: [UInt8]? = nil
    ) throws(TokenMintError) -> JWE {
        guard !recipientKeys.isEmpty, recipientKeys.count <= 64 else { throw .malformed("a JWE has 1 to 64 recipients") }
        for r in recipientKeys {
            try r.key.admit(r.algorithm, encryption: encryption, for: .encrypt)
            if r.algorithm.isDirect, recipientKeys.count > 1 { throw TokenMintError(.jose.algorithmNotAllowed, "\(r.algorithm) allows one recipient only") }
        }
        for name in ["alg", "enc", "zip", "epk", "iv", "tag", "crit"] {
            guard header[name] == nil || name == "crit", unprotectedHeader?[name] == nil,
                !recipientKeys.contains(where: { $0.header[name] != nil })
            else { throw .header("\"\(name)\" is set by the encryption, not by the caller") }
        }
        let single = recipientKeys.count == 1
        var protected = header
        protected.set("enc", .string(encryption.rawValue))
        var cek: SecureBytes
        var recipients: [Recipient] = []
        if single, recipientKeys[0].algorithm.isDirect {
            let r = recipientKeys[0]
            var own = r.header
            own.set("alg", .string(r.algorithm.rawValue))
            if let kid = r.key.keyID, own["kid"] == nil, protected["kid"] == nil { own.set("kid", .string(kid)) }
            for member in own { protected.set(member.name, member.value) }
            let direct = try JWEKeyManagement.directKey(r.key, algorithm: r.algorithm, encryption: encryption, header: protected)
            cek = direct.cek
            for member in direct.added { protected.set(member.name, member.value) }
            recipients = [Recipient(header: nil, encryptedKey: [])]
        } else {
            cek = SecureBytes(randomCount: encryption.keyByteCount)
            for r in recipientKeys {
                var own = r.header
                own.set("alg", .string(r.algorithm.rawValue))
                if let kid = r.key.keyID, own["kid"] == nil, !(single && protected["kid"] != nil) { own.set("kid", .string(kid)) }
                var context = protected
                for member in own { context.set(member.name, member.value) }
                let wrapped = try JWEKeyManagement.wrap(cek, to: r.key, algorithm: r.algorithm, encryption: encryption, header: context)
                for member in wrapped.header { own.set(member.name, member.value) }
                if single {
                    for member in own { protected.set(member.name, member.value) }
                    recipients.append(Recipient(header: nil, encryptedKey: wrapped.encryptedKey))
                } else {
                    recipients.append(Recipient(header: own, encryptedKey: wrapped.encryptedKey))
                }
            }
        }
        let protectedSegment = B64.encodePublic(JSONWriter.encode(.object(protected)))
        let aadSegment = additionalData.map { B64.encode($0) }
        var aad = Array(protectedSegment.utf8)
        if let aadSegment { aad.append(0x2E); aad += aadSegment.utf8 }
        let sealed = try encryption.seal(plaintext, key: cek, aad: aad)
        return try JWE(
            protectedSegment: protectedSegment, sharedHeader: unprotectedHeader, recipients: recipients, iv: sealed.iv,
            ciphertext: sealed.ciphertext, tag: sealed.tag, additionalDataSegment: aadSegment)
    }

    /// Decrypts with `key` (RFC 7516 §5.2). In the general serialization the
    /// recipients whose `kid` matches the key's (or that name none) are tried in order.
    /// - Throws: `.jose.decryptionFailed` when no recipient's content key
    ///   opens the content (a wrong key and a wrong tag look alike);
    ///   `.jose.unsupportedAlgorithm` for `RSA1_5`, `PBES2-*`, unknown names
    ///   and `zip`; `.jose.algorithmNotAllowed` when the key or the policy
    ///   refuses the algorithm; `.jose.invalidHeader`, `.jose.unsupportedCritical`.
    public func decrypt(using key: JWK, policy: JWEPolicy = JWEPolicy()) throws(TokenMintError) -> Decrypted {
        guard recipients.count <= policy.maximumRecipients else {
            throw TokenMintError(.jose.tooLarge, "the JWE lists \(recipients.count) recipients; this policy takes \(policy.maximumRecipients)")
        }
        var lastError: TokenMintError? = nil
        var tried = 0
        for (index, recipient) in recipients.enumerated() {
            let header = try header(for: recipient)
            if recipients.count > 1, let kid = key.keyID, let theirs = header["kid"]?.stringValue, theirs != kid { continue }
            tried += 1
            do throws(TokenMintError) {
                return try decrypt(recipient, index: index, header: header, key: key, policy: policy)
            } catch {
                if recipients.count == 1 { throw error }
                lastError = error
            }
        }
        if let lastError { throw lastError }
        throw TokenMintError(.jose.decryptionFailed, "no recipient of the JWE is for \(tried == 0 ? "this key's kid" : "this key")")
    }

    private func decrypt(_ recipient: Recipient, index: Int, header: JSONObject, key: JWK, policy: JWEPolicy) throws(TokenMintError) -> Decrypted {
        let (algorithm, encryption) = try JWE.algorithms(header, protectedHeader: protectedHeader, policy: policy)
        if key.algorithmName == encryption.rawValue, algorithm == .dir {
            // RFC 7520 §5.6: a dir key may name the content encryption it is for.
            var unbound = key
            unbound.algorithmName = nil
            try unbound.admit(algorithm, encryption: encryption, for: .decrypt)
        } else {
            try key.admit(algorithm, encryption: encryption, for: .decrypt)
        }
        let cek: SecureBytes
        if algorithm.isDirect {
            guard recipient.encryptedKey.isEmpty else { throw .malformed("\(algorithm) leaves the encrypted key empty") }
            if algorithm == .dir {
                guard case .secret(let s) = key.material else { throw TokenMintError(.jose.algorithmNotAllowed, "dir needs an oct key") }
                cek = s.bytes
            } else {
                cek = try JWEKeyManagement.agree(using: key, algorithm: algorithm, encryption: encryption, header: header)
            }
        } else {
            let unwrapped = try JWEKeyManagement.unwrap(recipient.encryptedKey, using: key, algorithm: algorithm, encryption: encryption, header: header)
            // A key that does not unwrap, or has the wrong length, goes on as a random one (RFC 7516 §11.5).
            if let unwrapped, unwrapped.count == encryption.keyByteCount { cek = unwrapped } else { cek = SecureBytes(randomCount: encryption.keyByteCount) }
        }
        guard iv.count == encryption.ivByteCount else { throw TokenMintError(.jose.decryptionFailed, "\(encryption) takes a \(encryption.ivByteCount)-byte IV") }
        do throws(TokenMintError) {
            let plaintext = try encryption.open(ciphertext, key: cek, iv: iv, tag: tag, aad: authenticatedData)
            return Decrypted(header: header, algorithm: algorithm, encryption: encryption, recipientIndex: index, plaintext: plaintext)
        } catch {
            throw TokenMintError(.jose.decryptionFailed, "the JWE does not decrypt with \(key): \(error.reason)", underlying: error)
        }
    }

    /// `alg` and `enc` from a recipient's header, with `zip` and `crit` checked.
    static func algorithms(_ header: JSONObject, protectedHeader: JSONObject, policy: JWEPolicy) throws(TokenMintError) -> (JWEAlgorithm, JWEEncryption) {
        guard let algName = header["alg"] else { throw .header("the JWE header has no \"alg\"") }
        guard let algText = algName.stringValue else { throw .header("\"alg\" must be a string") }
        guard let encName = protectedHeader["enc"] else { throw .header("\"enc\" must be in the protected header") }
        guard let encText = encName.stringValue else { throw .header("\"enc\" must be a string") }
        guard let algorithm = JWEAlgorithm(name: algText) else {
            throw TokenMintError(.jose.unsupportedAlgorithm, "JWE alg \"\(SafeText.escaped(algText))\" is not supported (RSA1_5 and PBES2 are refused on purpose)")
        }
        guard let encryption = JWEEncryption(name: encText) else {
            throw TokenMintError(.jose.unsupportedAlgorithm, "JWE enc \"\(SafeText.escaped(encText))\" is not supported")
        }
        if header["zip"] != nil {
            throw TokenMintError(.jose.unsupportedAlgorithm, "\"zip\": TokenMint does not decompress JWE content (RFC 8725 §3.6)")
        }
        if let crit = protectedHeader["crit"] {
            guard let names = crit.arrayValue, !names.isEmpty else { throw .header("\"crit\" must be a non-empty array") }
            for item in names {
                guard let name = item.stringValue, protectedHeader[name] != nil else { throw .header("\"crit\" names a member the protected header lacks") }
                guard policy.understoodCritical.contains(name), !JWSHeader.registered.contains(name) else {
                    throw TokenMintError(.jose.unsupportedCritical, "\"crit\" names \"\(SafeText.escaped(name))\", which this decrypter does not understand")
                }
            }
        }
        if let allowed = policy.algorithms, !allowed.contains(algorithm) {
            throw TokenMintError(.jose.algorithmNotAllowed, "the policy does not accept \(algorithm)")
        }
        if let allowed = policy.encryptions, !allowed.contains(encryption) {
            throw TokenMintError(.jose.algorithmNotAllowed, "the policy does not accept \(encryption)")
        }
        return (algorithm, encryption)
    }
}
