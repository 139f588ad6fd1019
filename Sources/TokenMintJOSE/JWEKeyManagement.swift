import TokenMintCore
import TokenMintCrypto

/// The key management step of RFC 7516 §5.1 (steps 1–6) and §5.2 (steps
/// 9–10) for one recipient, with RFC 7518 §4's algorithms.
enum JWEKeyManagement {
    /// What a recipient's key management produced: the encrypted key and
    /// the header members it adds (`epk`, `iv`, `tag`).
    struct Wrapped {
        var encryptedKey: [UInt8] = []
        var header = JSONObject()
    }

    /// For a direct algorithm, the content key; it comes from the key itself.
    static func directKey(
        _ key: JWK, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> (cek: SecureBytes, added: JSONObject) {
        switch algorithm {
        case .dir:
            guard case .secret(let s) = key.material else { throw TokenMintError(.jose.algorithmNotAllowed, "dir needs an oct key") }
            return (s.bytes, JSONObject())
        case .ECDH_ES:
            let (derived, epk) = try agree(with: key, algorithm: algorithm, encryption: encryption, header: header)
            var added = JSONObject()
            added.set("epk", .object(epk))
            return (derived, added)
        default:
            throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) is not a direct algorithm")
        }
    }

    /// For a key-wrapping algorithm, `cek` encrypted to `key`.
    static func wrap(
        _ cek: SecureBytes, to key: JWK, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> Wrapped {
        var out = Wrapped()
        switch (algorithm, key.material) {
        case (.RSA_OAEP, .rsaPublic(let k)), (.RSA_OAEP_256, .rsaPublic(let k)):
            out.encryptedKey = try k.encrypt(cek, oaepHash: algorithm == .RSA_OAEP ? .sha1 : .sha256)
        case (.RSA_OAEP, .rsaPrivate(let k)), (.RSA_OAEP_256, .rsaPrivate(let k)):
            out.encryptedKey = try k.publicKey.encrypt(cek, oaepHash: algorithm == .RSA_OAEP ? .sha1 : .sha256)
        case (.A128KW, .secret(let s)), (.A192KW, .secret(let s)), (.A256KW, .secret(let s)):
            out.encryptedKey = try AES.KeyWrap.wrap(cek, using: s.bytes)
        case (.A128GCMKW, .secret(let s)), (.A192GCMKW, .secret(let s)), (.A256GCMKW, .secret(let s)):
            let iv = SecureRandom.bytes(count: AES.GCM.nonceByteCount)
            let sealed = try cek.withUnsafeBytes { (c) throws(TokenMintError) in
                try AES.GCM.seal(c, key: s.bytes, nonce: iv, authenticating: [UInt8]())
            }
            out.encryptedKey = sealed.ciphertext
            out.header.set("iv", .string(B64.encode(iv)))
            out.header.set("tag", .string(B64.encode(sealed.tag)))
        case (.ECDH_ES_A128KW, _), (.ECDH_ES_A192KW, _), (.ECDH_ES_A256KW, _):
            let (kek, epk) = try agree(with: key, algorithm: algorithm, encryption: encryption, header: header)
            out.encryptedKey = try AES.KeyWrap.wrap(cek, using: kek)
            out.header.set("epk", .object(epk))
        default:
            throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) cannot wrap a key with \(key)")
        }
        return out
    }

    /// The sender's ECDH-ES: a fresh ephemeral key on the recipient's
    /// curve, the shared secret, and the Concat KDF output.
    private static func agree(
        with key: JWK, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> (SecureBytes, JSONObject) {
        func ec(_ peer: ECDSA.PublicKey) throws(TokenMintError) -> (SecureBytes, JWK) {
            let ephemeral = try ECDSA.PrivateKey(curve: peer.curve)
            return (try ECDH.sharedSecret(ephemeral, peer), JWK(material: .ecPublic(ephemeral.publicKey)))
        }
        func x25519(_ peer: X25519.PublicKey) throws(TokenMintError) -> (SecureBytes, JWK) {
            let ephemeral = try X25519.PrivateKey()
            return (try ephemeral.sharedSecret(with: peer), JWK(material: .x25519Public(ephemeral.publicKey)))
        }
        let (secret, epk): (SecureBytes, JWK)
        switch key.material {
        case .ecPublic(let peer): (secret, epk) = try ec(peer)
        case .ecPrivate(let own): (secret, epk) = try ec(own.publicKey)
        case .x25519Public(let peer): (secret, epk) = try x25519(peer)
        case .x25519Private(let own): (secret, epk) = try x25519(own.publicKey)
        default: throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) needs an EC or X25519 key")
        }
        var members = JSONObject()
        for (name, value) in epk.requiredMembers { members.set(name, .string(value)) }
        return (try deriveKey(secret, algorithm: algorithm, encryption: encryption, header: header), members)
    }

    /// The recipient's ECDH-ES: the shared secret with the header's `epk`,
    /// which must be a public key on the recipient's own curve.
    static func agree(
        using key: JWK, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> SecureBytes {
        guard let epkObject = header["epk"]?.objectValue else { throw .header("\(algorithm) needs an \"epk\" object") }
        guard epkObject["d"] == nil else { throw .header("\"epk\" must be a public key") }
        let epk: JWK
        do { epk = try JWK(object: epkObject) } catch {
            throw TokenMintError(.jose.invalidHeader, "\"epk\" is not a valid public key: \(error.reason)", underlying: error)
        }
        let secret: SecureBytes
        do throws(TokenMintError) {
            switch (key.material, epk.material) {
            case (.ecPrivate(let own), .ecPublic(let peer)):
                guard own.curve == peer.curve else { throw .header("\"epk\" is on \(peer.curve.name), the key on \(own.curve.name)") }
                secret = try ECDH.sharedSecret(own, peer)
            case (.x25519Private(let own), .x25519Public(let peer)):
                secret = try own.sharedSecret(with: peer)
            default:
                throw .header("\"epk\" (\(epk.keyType.rawValue) \(epk.curveName ?? "")) does not match the key's type and curve")
            }
        } catch {
            throw TokenMintError.wrap(error, as: .jose.invalidHeader, "\"epk\": \(error.reason)")
        }
        return try deriveKey(secret, algorithm: algorithm, encryption: encryption, header: header)
    }

    /// Concat KDF (RFC 7518 §4.6.2): AlgorithmID, PartyUInfo, PartyVInfo each
    /// length-prefixed, SuppPubInfo the key length in bits.
    private static func deriveKey(
        _ secret: SecureBytes, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> SecureBytes {
        let id = algorithm == .ECDH_ES ? encryption.rawValue : algorithm.rawValue
        let count = algorithm == .ECDH_ES ? encryption.keyByteCount : (algorithm.wrapKeyByteCount ?? 0)
        func party(_ name: String) throws(TokenMintError) -> [UInt8] {
            guard let member = header[name] else { return [] }
            guard let text = member.stringValue else { throw .header("\"\(name)\" must be a base64url string") }
            let bytes = try B64.decode(text, "\"\(name)\"")
            guard bytes.count <= 1024 else { throw .header("\"\(name)\" is longer than 1024 bytes") }
            return bytes
        }
        var info: [UInt8] = []
        for field in [Array(id.utf8), try party("apu"), try party("apv")] {
            info += bigEndian32(field.count)
            info += field
        }
        info += bigEndian32(count * 8)
        return try ConcatKDF.deriveKey(sharedSecret: secret, otherInfo: info, outputByteCount: count)
    }

    private static func bigEndian32(_ value: Int) -> [UInt8] {
        let v = UInt32(truncatingIfNeeded: value)
        return [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    /// The recipient's side of a key-wrapping algorithm. Any failure to
    /// unwrap gives nil; the caller then goes on with a random key so that
    /// a wrong key and a wrong tag look alike (RFC 7516 §11.5).
    static func unwrap(
        _ encryptedKey: [UInt8], using key: JWK, algorithm: JWEAlgorithm, encryption: JWEEncryption, header: JSONObject
    ) throws(TokenMintError) -> SecureBytes? {
        switch (algorithm, key.material) {
        case (.RSA_OAEP, .rsaPrivate(let k)), (.RSA_OAEP_256, .rsaPrivate(let k)):
            return try? k.decrypt(encryptedKey, oaepHash: algorithm == .RSA_OAEP ? .sha1 : .sha256)
        case (.A128KW, .secret(let s)), (.A192KW, .secret(let s)), (.A256KW, .secret(let s)):
            return try? AES.KeyWrap.unwrap(encryptedKey, using: s.bytes)
        case (.A128GCMKW, .secret(let s)), (.A192GCMKW, .secret(let s)), (.A256GCMKW, .secret(let s)):
            guard let ivText = header["iv"]?.stringValue, let tagText = header["tag"]?.stringValue else {
                throw .header("\(algorithm) needs \"iv\" and \"tag\" strings in the header")
            }
            let iv = try B64.decode(ivText, "the key wrap IV")
            let tag = try B64.decode(tagText, "the key wrap tag")
            guard iv.count == AES.GCM.nonceByteCount, tag.count == AES.GCM.tagByteCount else {
                throw .header("\(algorithm) takes a 12-byte \"iv\" and a 16-byte \"tag\"")
            }
            return try? AES.GCM.open(encryptedKey, key: s.bytes, nonce: iv, tag: tag, authenticating: [UInt8]())
        case (.ECDH_ES_A128KW, _), (.ECDH_ES_A192KW, _), (.ECDH_ES_A256KW, _):
            let kek = try agree(using: key, algorithm: algorithm, encryption: encryption, header: header)
            return try? AES.KeyWrap.unwrap(encryptedKey, using: kek)
        default:
            throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) cannot unwrap with \(key)")
        }
    }
}
