// Only the C library here: its `stdout` is a global variable, which Swift 6
// lets a module use without checks only through a @preconcurrency import.
@preconcurrency import Glibc

/// The C library's standard output stream, the one `print` writes to.
nonisolated(unsafe) let standardOutputStream: UnsafeMutablePointer<FILE> = stdout
