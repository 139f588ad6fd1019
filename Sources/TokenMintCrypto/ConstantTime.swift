#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
