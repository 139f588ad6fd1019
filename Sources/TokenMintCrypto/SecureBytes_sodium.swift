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
/// - A secret of up to 2 KiB gets a slot in a page of slots of its size. The
///   page is locked and kept out of core dumps once, when it is made, and
///   never unlocked: no system call per secret, and freeing one secret cannot
///   unlock the page a neighbour still uses (unlocks do not nest, so locking
///   each small allocation's pages and unlocking them on free did exactly
///   that).
/// - A larger secret gets pages of its own, locked and unlocked with it.
///
/// A page the process could not lock (its `RLIMIT_MEMLOCK` reached) is
/// remembered and locked again when one of its slots is handed out, so a
/// secret is never knowingly left in an unlocked page while the limit allows
/// locking it. Slots are wiped before they come back; pages of slots live as
/// long as the process.
enum LockedPages {
    /// Slot sizes in bytes; a larger secret gets its own pages.
    static let slotSizes = [32, 64, 128, 256, 512, 1024, 2048]
    static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 4096 ? size : 4096
    }()

    struct State {
        /// Free slots, one list per size.
        var free = [[UnsafeMutableRawPointer]](repeating: [], count: LockedPages.slotSizes.count)
        /// Pages of slots that `mlock` refused, by address.
        var unlocked: Set<UInt> = []
    }

    private static let state = Locked(State())

    /// `count` bytes (at least 1) of locked memory, not initialized.
    static func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        guard let slot = slotSizes.firstIndex(where: { $0 >= count }) else {
            let length = pagesLength(count)
            let base = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: pageSize)
            _ = sodium_mlock(base, length)
            return UnsafeMutableRawBufferPointer(start: base, count: count)
        }
        let base = state.withLock { state -> UnsafeMutableRawPointer in
            if let base = state.free[slot].popLast() {
                let page = UInt(bitPattern: base) & ~UInt(pageSize - 1)
                if !state.unlocked.isEmpty, state.unlocked.contains(page),
                    let start = UnsafeMutableRawPointer(bitPattern: page), sodium_mlock(start, pageSize) == 0
                {
                    state.unlocked.remove(page)
                }
                return base
            }
            let size = slotSizes[slot]
            let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: pageSize)
            if sodium_mlock(page, pageSize) != 0 { state.unlocked.insert(UInt(bitPattern: page)) }
            for offset in stride(from: pageSize - size, to: 0, by: -size) { state.free[slot].append(page + offset) }
            return page
        }
        return UnsafeMutableRawBufferPointer(start: base, count: count)
    }

    /// Takes back memory from ``allocate(_:)``, wiped again here.
    static func release(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        guard let slot = slotSizes.firstIndex(where: { $0 >= buffer.count }) else {
            _ = sodium_munlock(base, pagesLength(buffer.count))  // wipes the whole length first
            base.deallocate()
            return
        }
        sodium_memzero(base, buffer.count)
        state.withLock { $0.free[slot].append(base) }
    }

    /// `count` rounded up to whole pages.
    private static func pagesLength(_ count: Int) -> Int {
        (count + pageSize - 1) / pageSize * pageSize
    }
}
