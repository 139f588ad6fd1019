internal import CSodium

// The libsodium side of SecureBytes: locked pages, wiped on release (the
// public API is in SecureBytes.swift).

extension SecureBytes {
    /// The secret's memory: locked with `sodium_mlock`, wiped with
    /// `sodium_memzero` and unlocked when the last copy goes away.
    final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutableRawBufferPointer

        init(count: Int) {
            pointer = .allocate(byteCount: max(count, 1), alignment: 16)
            if count == 0 {
                pointer[0] = 0
            }
            if let base = pointer.baseAddress { _ = sodium_mlock(base, pointer.count) }
        }

        deinit {
            if let base = pointer.baseAddress {
                sodium_memzero(base, pointer.count)
                _ = sodium_munlock(base, pointer.count)
            }
            pointer.deallocate()
        }
    }
}
