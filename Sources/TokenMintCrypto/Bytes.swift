#if canImport(FoundationEssentials)
public import TokenMintCore
public import FoundationEssentials
#else
public import Foundation
#endif

extension DataProtocol {
    /// Calls `body` with the bytes as one contiguous buffer, copying only when
    /// the collection is not contiguous already.
    @inlinable
    func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = self.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(self).withUnsafeBytes(body)
    }

    /// As `withContiguousBytes`, for a body that throws a `TokenMintError`.
    @inlinable
    func withContiguousBytes<R>(
        throwing body: (UnsafeRawBufferPointer) throws(TokenMintError) -> R
    ) throws(TokenMintError) -> R {
        let result: Result<R, TokenMintError> = withContiguousBytes { buffer in
            do throws(TokenMintError) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

/// A valid pointer for zero-length buffers, whose `baseAddress` may be nil:
/// libsodium declares its pointer parameters non-null.
nonisolated(unsafe) private let emptyBytes: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()

extension UnsafeRawBufferPointer {
    /// The start as a byte pointer, never nil.
    var bytes: UnsafePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyBytes)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The start as a byte pointer, never nil.
    var bytes: UnsafeMutablePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyBytes
    }
}
