import TokenMintCore
import TokenMintCrypto

// The BoringSSL side of ML-DSA (MLDSA.swift has the public API), through the
// raw-buffer calls of BoringMLDSA.swift. The expanded private key lives in a SecureBytes buffer (locked, wiped), never
// in ordinary memory.

extension MLDSA.ParameterSet {
    /// 44, 65 or 87.
    var level: Int {
        switch self {
        case .mlDSA44: 44
        case .mlDSA65: 65
        case .mlDSA87: 87
        }
    }
}

extension MLDSA {
    static let unavailable = TokenMintError(.crypto.unsupportedAlgorithm, "ML-DSA needs TokenMint built with the MLDSA trait")

    /// A parsed public key (ML-DSA's tr = H(pk) is computed once), on the heap.
    final class ParsedPublicKey: @unchecked Sendable {
        let level: Int
        let storage: UnsafeMutableRawPointer

        init(_ encoded: [UInt8], _ parameterSet: ParameterSet) throws(TokenMintError) {
            level = parameterSet.level
            #if MLDSA
            let layout = BoringMLDSA.publicLayout(level)
            storage = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: layout.alignment)
            let parsed = encoded.withUnsafeBytes { BoringMLDSA.parsePublicKey(level, $0, into: storage) }
            // deinit frees the storage on this throw too.
            guard parsed else { throw TokenMintError(.crypto.invalidKey, "not an \(parameterSet.rawValue) public key") }
            #else
            throw MLDSA.unavailable
            #endif
        }

        deinit { storage.deallocate() }

        func verify(_ signature: [UInt8], _ message: [UInt8], _ context: [UInt8]) -> Bool {
            #if MLDSA
            signature.withUnsafeBytes { s in
                message.withUnsafeBytes { m in
                    context.withUnsafeBytes { c in BoringMLDSA.verify(level, key: storage, signature: s, message: m, context: c) }
                }
            }
            #else
            false
            #endif
        }
    }

    /// The expanded private key (in zeroing memory) and the encoded public key for `seed`.
    static func expand(_ seed: SecureBytes, _ set: ParameterSet) throws(TokenMintError) -> (SecureBytes, [UInt8]) {
        #if MLDSA
        let layout = BoringMLDSA.privateLayout(set.level)
        let expanded = try SecureBytes(count: layout.size, initializingWith: { (out: UnsafeMutableRawBufferPointer) throws(TokenMintError) -> Void in
            guard let base = out.baseAddress, Int(bitPattern: base) % layout.alignment == 0 else {
                throw TokenMintError(.crypto.libraryFailure, "zeroing memory is not aligned for an ML-DSA key")
            }
            guard seed.withUnsafeBytes({ BoringMLDSA.expand(set.level, seed: $0, into: base) }) else {
                throw TokenMintError(.crypto.libraryFailure, "ML-DSA key expansion failed")
            }
        })
        var encoded = [UInt8](repeating: 0, count: set.publicKeyByteCount)
        let written = expanded.withUnsafeBytes { key in
            encoded.withUnsafeMutableBytes { out in
                key.baseAddress.map { BoringMLDSA.encodePublicKey(set.level, privateKey: $0, into: out) } ?? false
            }
        }
        guard written else { throw TokenMintError(.crypto.libraryFailure, "ML-DSA public key encoding failed") }
        return (expanded, encoded)
        #else
        throw unavailable
        #endif
    }

    /// A hedged signature with the expanded key.
    static func sign(_ expanded: SecureBytes, _ set: ParameterSet, _ message: [UInt8], _ context: [UInt8]) throws(TokenMintError) -> [UInt8] {
        #if MLDSA
        var signature = [UInt8](repeating: 0, count: set.signatureByteCount)
        let signed = expanded.withUnsafeBytes { key in
            signature.withUnsafeMutableBytes { out in
                message.withUnsafeBytes { m in
                    context.withUnsafeBytes { c in
                        key.baseAddress.map { BoringMLDSA.sign(set.level, privateKey: $0, message: m, context: c, into: out) } ?? false
                    }
                }
            }
        }
        guard signed else { throw TokenMintError(.crypto.libraryFailure, "ML-DSA signing failed") }
        return signature
        #else
        throw unavailable
        #endif
    }
}
