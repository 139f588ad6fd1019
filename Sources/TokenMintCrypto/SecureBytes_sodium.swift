import TokenMintCore
internal import CSodium
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

// The libsodium side of SecureBytes: locked pages, wiped on release (the
// public API is in SecureBytes.swift).

extension SecureBytes {
    /// The secret's memory, from ``LockedPages``: wiped with `sodium_memzero`
    /// when the last copy goes away.
    final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutableRawBufferPointer

        init(count: Int) {
            pointer = LockedPages.allocate(max(count, 1))
            if count == 0 {
                pointer[0] = 0
            }
        }

        deinit {
            if let base = pointer.baseAddress { sodium_memzero(base, pointer.count) }
            LockedPages.release(pointer)
        }
    }
}

/// Locked memory for secrets. `mlock` and `madvise(MADV_DONTDUMP)` work on
/// whole pages, so they are applied to whole pages only:
///
/// - A secret of up to 2 KiB gets a slot in a 64 KiB chunk that is locked and
///   kept out of core dumps once, when it is made, and never unlocked: no
///   system call per secret, and freeing one secret cannot unlock the page a
///   neighbour still uses (unlocks do not nest, so locking each small
///   allocation's pages and unlocking them on free did exactly that).
/// - A larger secret gets pages of its own, locked and unlocked with it.
///
/// Slots are wiped by their owner before they come back; chunks live as long
/// as the process. When the lock limit is reached the memory is used
/// unlocked, as before.
enum LockedPages {
    /// Slot sizes in bytes; a larger secret gets its own pages.
    static let slotSizes = [32, 64, 128, 256, 512, 1024, 2048]
    static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()
    static let chunkBytes = max(64 * 1024, pageSize)

    /// Free slots, one list per size.
    private static let freeSlots = Locked([[UnsafeMutableRawPointer]](repeating: [], count: slotSizes.count))

    /// `count` bytes (at least 1) of locked memory, not initialized.
    static func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        guard let slot = slotSizes.firstIndex(where: { $0 >= count }) else {
            let length = pagesLength(count)
            let base = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: pageSize)
            _ = sodium_mlock(base, length)
            return UnsafeMutableRawBufferPointer(start: base, count: count)
        }
        let base = freeSlots.withLock { lists -> UnsafeMutableRawPointer in
            if let base = lists[slot].popLast() { return base }
            let size = slotSizes[slot]
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: chunkBytes, alignment: pageSize)
            _ = sodium_mlock(chunk, chunkBytes)
            lists[slot].reserveCapacity(lists[slot].count + chunkBytes / size)
            for offset in stride(from: chunkBytes - size, to: 0, by: -size) { lists[slot].append(chunk + offset) }
            return chunk
        }
        return UnsafeMutableRawBufferPointer(start: base, count: count)
    }

    /// Takes back memory from ``allocate(_:)``, already wiped by its owner.
    static func release(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        guard let slot = slotSizes.firstIndex(where: { $0 >= buffer.count }) else {
            _ = sodium_munlock(base, pagesLength(buffer.count))
            base.deallocate()
            return
        }
        freeSlots.withLock { $0[slot].append(base) }
    }

    /// `count` rounded up to whole pages.
    private static func pagesLength(_ count: Int) -> Int {
        (count + pageSize - 1) / pageSize * pageSize
    }
}
