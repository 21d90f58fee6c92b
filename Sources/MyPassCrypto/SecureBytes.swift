public import Foundation
internal import CSodium

/// A buffer for key material: copy-on-write, locked in memory where the system allows
/// (`sodium_mlock`), zeroed when released (`sodium_memzero`), compared in constant time.
///
/// The bytes are reachable only through `withUnsafeBytes`; `description` shows the length alone.
public struct SecureBytes: Sendable {
    private var storage: Storage

    /// `count` zero bytes.
    public init(count: Int) {
        storage = Storage(count: count)
    }

    /// A copy of `bytes`. The caller remains responsible for wiping its own copy.
    public init(_ bytes: some ContiguousBytes) {
        storage = bytes.withUnsafeBytes { source in
            let storage = Storage(count: source.count)
            if let base = source.baseAddress, source.count > 0 {
                storage.pointer.copyMemory(from: base, byteCount: source.count)
            }
            return storage
        }
    }

    /// A copy of the given byte values (for literals and tests).
    public init(bytes: [UInt8]) {
        self.init(bytes)
    }

    /// `count` bytes from the operating system's secure random source (libsodium `randombytes_buf`).
    public init(randomCount count: Int) throws(CryptoError) {
        try CryptoLibraries.ensureInitialized()
        storage = Storage(count: count)
        if count > 0 {
            randombytes_buf(storage.pointer, count)
        }
    }

    /// Number of bytes held.
    public var count: Int { storage.count }

    /// Whether the buffer holds no bytes.
    public var isEmpty: Bool { storage.count == 0 }

    /// Whether the operating system agreed to keep these bytes out of swap.
    public var isMemoryLocked: Bool { storage.isLocked }

    /// Calls `body` with the bytes; the pointer must not escape.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: storage.count))
    }

    /// Calls `body` with mutable bytes, copying first if the storage is shared.
    public mutating func withUnsafeMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy()
        }
        return try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: storage.count))
    }

    /// The concatenation of `self` and `other`, itself secure.
    public func appending(_ other: some ContiguousBytes) -> SecureBytes {
        other.withUnsafeBytes { tail in
            var result = SecureBytes(count: count + tail.count)
            result.withUnsafeMutableBytes { target in
                if count > 0 {
                    target.baseAddress!.copyMemory(from: storage.pointer, byteCount: count)
                }
                if let tailBase = tail.baseAddress, tail.count > 0 {
                    (target.baseAddress! + count).copyMemory(from: tailBase, byteCount: tail.count)
                }
            }
            return result
        }
    }

    /// Bytes `range` as a new secure buffer. Traps on a range outside `0..<count`, like `Array`.
    public func subrange(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "SecureBytes range out of bounds")
        return withUnsafeBytes { source in
            SecureBytes(UnsafeRawBufferPointer(rebasing: source[range]))
        }
    }

    /// A plain `Data` copy, for handing bytes to APIs that are not secret-aware (the caller owns the risk).
    public func unprotectedData() -> Data {
        withUnsafeBytes { Data($0) }
    }
}

extension SecureBytes: ContiguousBytes {}

extension SecureBytes: Equatable {
    /// Constant-time comparison (`sodium_memcmp`); buffers of different lengths are unequal.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        ConstantTime.isEqual(lhs, rhs)
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Shows the length only, never the bytes.
    public var description: String { "SecureBytes(\(count) bytes)" }
    /// Shows the length only, never the bytes.
    public var debugDescription: String { description }
}

extension SecureBytes {
    /// The heap buffer behind a `SecureBytes`: locked on allocation, wiped and unlocked on release.
    ///
    /// Unchecked: owns raw memory the compiler cannot follow; written only through `withUnsafeMutableBytes`, which copies unless uniquely referenced.
    fileprivate final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let count: Int
        let isLocked: Bool

        init(count: Int) {
            precondition(count >= 0, "negative SecureBytes size")
            self.count = count
            // Allocate at least one byte so the pointer is always valid.
            pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
            pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
            isLocked = count > 0 && sodium_mlock(pointer, count) == 0
        }

        func copy() -> Storage {
            let duplicate = Storage(count: count)
            duplicate.pointer.copyMemory(from: pointer, byteCount: count)
            return duplicate
        }

        deinit {
            sodium_memzero(pointer, max(count, 1))
            if isLocked {
                _ = sodium_munlock(pointer, count)
            }
            pointer.deallocate()
        }
    }
}
