#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium calls are in SecureRandom_sodium.swift.

/// The CSPRNG: libsodium's `randombytes_buf` (getrandom(2) on Linux).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodiumFill(base, count: buffer.count)
    }
}

/// Comparisons whose running time does not depend on the bytes compared.
public enum ConstantTime {
    /// `true` when both buffers have the same length and contents. The time
    /// taken depends only on the length (libsodium `sodium_memcmp`).
    public static func equals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        return sodiumEquals(lhs, rhs)
    }

    /// `true` when both byte sequences have the same length and contents, in
    /// time that depends only on the length.
    public static func equals(_ lhs: some DataProtocol, _ rhs: some DataProtocol) -> Bool {
        lhs.withContiguousBytes { l in rhs.withContiguousBytes { r in equals(l, r) } }
    }
}
