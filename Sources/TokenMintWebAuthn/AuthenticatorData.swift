public import TokenMintCore
import TokenMintCrypto
public import TokenMintCBOR

/// authenticatorData (W3C WebAuthn L3 §6.1): rpIdHash ‖ flags ‖ signCount
/// (u32 big-endian) ‖ [aaguid ‖ credIdLen u16 ‖ credId ‖ COSE key] ‖ [extensions].
public struct AuthenticatorData: Sendable, Hashable {
    /// Flag bits.
    public struct Flags: OptionSet, Sendable, Hashable {
        /// The raw byte.
        public let rawValue: UInt8
        /// Flags from a byte.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// User present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// User verified.
        public static let userVerified = Flags(rawValue: 0x04)
        /// Backup eligible.
        public static let backupEligible = Flags(rawValue: 0x08)
        /// Backed up.
        public static let backupState = Flags(rawValue: 0x10)
        /// Attested credential data included.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// Extension data included.
        public static let extensionData = Flags(rawValue: 0x80)
        /// Reserved bits, which must be zero.
        public static let reserved = Flags(rawValue: 0x22)
    }

    /// Attested credential data (registration only).
    public struct AttestedCredential: Sendable, Hashable {
        /// The authenticator model's AAGUID (16 bytes).
        public let aaguid: [UInt8]
        /// The credential ID (at most 1,023 bytes).
        public let credentialID: [UInt8]
        /// The credential public key.
        public let publicKey: COSEKey
    }

    /// SHA-256 of the RP ID.
    public let rpIDHash: [UInt8]
    /// The flags.
    public let flags: Flags
    /// The signature counter.
    public let signCount: UInt32
    /// Attested credential data, when AT is set.
    public let attestedCredential: AttestedCredential?
    /// Extension outputs (a CBOR map), when ED is set.
    public let extensions: CBOR?
    /// The bytes, exactly as built or received.
    public let bytes: [UInt8]

    /// Builds authenticator data; AT and ED follow from the arguments.
    public init(rpID: String, flags: Flags, signCount: UInt32, attestedCredential: AttestedCredential? = nil, extensions: CBOR? = nil) {
        self.init(rpIDHash: HashFunction.sha256.hash(Array(rpID.utf8)), flags: flags, signCount: signCount,
                  attestedCredential: attestedCredential, extensions: extensions)
    }

    /// Builds authenticator data from a precomputed SHA-256 of the RP ID.
    public init(rpIDHash hash: [UInt8], flags: Flags, signCount: UInt32, attestedCredential: AttestedCredential? = nil, extensions: CBOR? = nil) {
        var flags = flags.subtracting([.attestedCredentialData, .extensionData, .reserved])
        if attestedCredential != nil { flags.insert(.attestedCredentialData) }
        if extensions != nil { flags.insert(.extensionData) }
        let encodedExtensions = extensions.map { CBOREncoder.encode($0) }
        var bytes = [UInt8]()
        // One allocation for the common case (no attested credential): 37 bytes and the extensions.
        bytes.reserveCapacity(hash.count + 5 + (encodedExtensions?.count ?? 0))
        bytes += hash
        bytes.append(flags.rawValue)
        bytes.append(UInt8(signCount >> 24))
        bytes.append(UInt8(signCount >> 16 & 0xff))
        bytes.append(UInt8(signCount >> 8 & 0xff))
        bytes.append(UInt8(signCount & 0xff))
        if let credential = attestedCredential {
            bytes += credential.aaguid
            bytes += [UInt8(credential.credentialID.count >> 8), UInt8(credential.credentialID.count & 0xff)]
            bytes += credential.credentialID
            bytes += credential.publicKey.cbor
        }
        if let encodedExtensions { bytes += encodedExtensions }
        self.rpIDHash = hash
        self.flags = flags
        self.signCount = signCount
        self.attestedCredential = attestedCredential
        self.extensions = extensions
        self.bytes = bytes
    }

    /// Parses strictly: reserved bits zero, AT and ED consistent with what
    /// follows, canonical CBOR, no trailing bytes.
    public init(parsing bytes: [UInt8]) throws(TokenMintError) {
        func fail(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidAuthenticatorData, why) }
        guard bytes.count >= 37 else { throw fail("authenticatorData is shorter than 37 bytes") }
        guard bytes.count <= 64 * 1024 else { throw fail("authenticatorData larger than 64 KiB") }
        let flags = Flags(rawValue: bytes[32])
        guard flags.isDisjoint(with: .reserved) else { throw fail("reserved flag bits are set") }
        var offset = 37
        var credential: AttestedCredential? = nil
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw fail("attested credential data is truncated") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length >= 1, length <= 1023, bytes.count >= offset + length else { throw fail("credential ID length \(length) is invalid") }
            let id = Array(bytes[offset..<offset + length])
            offset += length
            let (item, used): (CBOR, Int)
            do { (item, used) = try CBORDecoder.decodePrefix(bytes[offset...], requireCanonical: true) } catch {
                throw TokenMintError(.webAuthn.invalidPublicKey, "credential public key: \(error)", underlying: error)
            }
            let key = try COSEKey(item: item)
            guard key.cbor == Array(bytes[offset..<offset + used]) else { throw TokenMintError(.webAuthn.invalidPublicKey, "the COSE key is not in canonical form") }
            offset += used
            credential = AttestedCredential(aaguid: aaguid, credentialID: id, publicKey: key)
        }
        var extensions: CBOR? = nil
        if flags.contains(.extensionData) {
            guard offset < bytes.count else { throw fail("ED is set but there are no extensions") }
            let (item, used): (CBOR, Int)
            do { (item, used) = try CBORDecoder.decodePrefix(bytes[offset...], requireCanonical: true) } catch {
                throw fail("extensions: \(error)")
            }
            guard item.mapValue != nil else { throw fail("extensions must be a CBOR map") }
            offset += used
            extensions = item
        }
        guard offset == bytes.count else { throw fail("\(bytes.count - offset) trailing bytes") }
        self.rpIDHash = Array(bytes[0..<32])
        self.flags = flags
        self.signCount = UInt32(bytes[33]) << 24 | UInt32(bytes[34]) << 16 | UInt32(bytes[35]) << 8 | UInt32(bytes[36])
        self.attestedCredential = credential
        self.extensions = extensions
        self.bytes = bytes
    }
}
