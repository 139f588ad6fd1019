internal import CSodium

// The libsodium side of SecureRandom and ConstantTime (the public API is in
// SecureRandom.swift).

extension SecureRandom {
    /// `randombytes_buf` over `count` bytes at `base` (count > 0).
    @inline(__always)
    static func sodiumFill(_ base: UnsafeMutableRawPointer, count: Int) {
        _ = Sodium.ready
        randombytes_buf(base, count)
    }
}

extension ConstantTime {
    /// `sodium_memcmp` over two non-empty buffers of the same length.
    @inline(__always)
    static func sodiumEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        _ = Sodium.ready
        return sodium_memcmp(lhs.baseAddress, rhs.baseAddress, lhs.count) == 0
    }
}
