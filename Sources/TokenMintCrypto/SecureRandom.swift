#if canImport(FoundationEssentials)
import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium calls are in SecureRandom_sodium.swift.


/// The CSPRNG: libsodium's `randombytes_buf` (getrandom(2) on Linux).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        // No capacity would be the shared empty array, whose count the initializer writes.
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
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
