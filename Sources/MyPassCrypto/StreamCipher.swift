public import Foundation
internal import CSodium

/// ChaCha20 (RFC 8439, 96-bit nonce) or Salsa20 (64-bit nonce) as a keystream read incrementally:
/// successive `apply` calls continue where the previous one stopped, at any byte offset. This is how
/// KDBX's inner random stream unmasks protected values in document order (libsodium).
///
/// A reference type with mutable position: use one instance from one task at a time.
public final class StreamCipher {
    /// The keystream generator.
    public enum Algorithm: Sendable {
        /// ChaCha20, IETF variant: 32-byte key, 12-byte nonce, 32-bit block counter.
        case chaCha20
        /// Salsa20/20: 32-byte key, 8-byte nonce, 64-bit block counter.
        case salsa20

        /// Nonce length in bytes.
        public var nonceSize: Int { self == .chaCha20 ? 12 : 8 }
        /// Key length in bytes.
        public var keySize: Int { 32 }
        fileprivate var maximumBlocks: UInt64 { self == .chaCha20 ? 1 << 32 : .max }
    }

    private static let blockSize = 64

    /// The generator in use.
    public let algorithm: Algorithm
    private let key: SecureBytes
    private let nonce: [UInt8]
    private var nextBlock: UInt64
    /// Keystream of the current partial block and how much of it was used.
    private var pendingBlock = SecureBytes(count: StreamCipher.blockSize)
    private var pendingOffset = StreamCipher.blockSize

    /// A stream keyed with `key` and `nonce`, starting at block `initialCounter`.
    public init(
        _ algorithm: Algorithm, key: SecureBytes, nonce: some ContiguousBytes, initialCounter: UInt64 = 0
    ) throws(CryptoError) {
        try CryptoLibraries.ensureInitialized()
        guard key.count == algorithm.keySize else {
            throw .invalidKeySize(expected: algorithm.keySize, actual: key.count)
        }
        let nonceBytes = nonce.withUnsafeBytes { [UInt8]($0) }
        guard nonceBytes.count == algorithm.nonceSize else {
            throw .invalidNonceSize(expected: algorithm.nonceSize, actual: nonceBytes.count)
        }
        guard initialCounter < algorithm.maximumBlocks else {
            throw .invalidParameter("initial block counter out of range")
        }
        self.algorithm = algorithm
        self.key = key
        self.nonce = nonceBytes
        self.nextBlock = initialCounter
    }

    /// XORs the next `data.count` keystream bytes into `data` (encrypts or decrypts).
    public func apply(to data: inout Data) throws(CryptoError) {
        let result: Result<Void, CryptoError> = data.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in try apply(to: bytes) }
        }
        try result.get()
    }

    /// `input` XORed with the next `input.count` keystream bytes.
    public func applied(to input: some ContiguousBytes) throws(CryptoError) -> Data {
        var output = input.withUnsafeBytes { Data($0) }
        try apply(to: &output)
        return output
    }

    /// The next `count` keystream bytes, in secure memory.
    public func keystream(count: Int) throws(CryptoError) -> SecureBytes {
        var output = SecureBytes(count: count)
        let result: Result<Void, CryptoError> = output.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in try apply(to: bytes) }
        }
        try result.get()
        return output
    }

    /// XORs the next `buffer.count` keystream bytes into `buffer`.
    public func apply(to buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var position = 0
        let total = buffer.count

        // 1. What is left of the block started by the previous call.
        if pendingOffset < Self.blockSize {
            let take = min(total, Self.blockSize - pendingOffset)
            pendingBlock.withUnsafeBytes { pending in
                for index in 0..<take { base[index] ^= pending[pendingOffset + index] }
            }
            pendingOffset += take
            position = take
        }
        // 2. Whole blocks straight from the library, in place.
        let wholeBytes = (total - position) / Self.blockSize * Self.blockSize
        if wholeBytes > 0 {
            try xorKeystream(into: base + position, count: wholeBytes)
            position += wholeBytes
        }
        // 3. A partial tail: generate one block in place (its buffer is reused, locked once), use its
        //    head, keep the rest for the next call.
        if position < total {
            let result: Result<Void, CryptoError> = pendingBlock.withUnsafeMutableBytes { block in
                block.initializeMemory(as: UInt8.self, repeating: 0)
                return Result { () throws(CryptoError) in
                    try xorKeystream(into: block.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Self.blockSize)
                }
            }
            try result.get()
            let take = total - position
            pendingBlock.withUnsafeBytes { pending in
                for index in 0..<take { base[position + index] ^= pending[index] }
            }
            pendingOffset = take
        }
    }

    /// How many keystream bytes lie before the next one used, counted from block 0.
    package var position: UInt64 {
        nextBlock * UInt64(Self.blockSize) - UInt64(Self.blockSize - pendingOffset)
    }

    /// Makes keystream byte `offset` (counted from block 0) the next one used, as if every byte
    /// before it had been applied: a writer that masks parts of a document on two threads gives each
    /// part's stream the position that part starts at.
    package func reposition(to offset: UInt64) throws(CryptoError) {
        let blockSize = UInt64(Self.blockSize)
        nextBlock = offset / blockSize
        pendingOffset = Self.blockSize
        let used = Int(offset % blockSize)
        guard used > 0 else { return }
        let result: Result<Void, CryptoError> = pendingBlock.withUnsafeMutableBytes { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            return Result { () throws(CryptoError) in
                try xorKeystream(into: block.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Self.blockSize)
            }
        }
        try result.get()
        pendingOffset = used
    }

    /// A stream of the same key and nonce whose next byte is keystream byte `offset`, with state of
    /// its own (for another thread; this one is not `Sendable`).
    package func copy(at offset: UInt64) throws(CryptoError) -> StreamCipher {
        let copy = try StreamCipher(algorithm, key: key, nonce: nonce)
        try copy.reposition(to: offset)
        return copy
    }

    /// XORs `count` bytes of keystream (a multiple of the block size) starting at `nextBlock`.
    private func xorKeystream(into pointer: UnsafeMutablePointer<UInt8>, count: Int) throws(CryptoError) {
        let blocks = UInt64(count / Self.blockSize)
        guard nextBlock <= algorithm.maximumBlocks - blocks else { throw .keystreamExhausted }
        let status: Int32 = key.withUnsafeBytes { keyBytes in
            nonce.withUnsafeBufferPointer { nonceBytes in
                let keyPointer = keyBytes.bindMemory(to: UInt8.self).baseAddress!
                switch algorithm {
                case .chaCha20:
                    return crypto_stream_chacha20_ietf_xor_ic(
                        pointer, pointer, UInt64(count), nonceBytes.baseAddress!, UInt32(nextBlock), keyPointer)
                case .salsa20:
                    return crypto_stream_salsa20_xor_ic(
                        pointer, pointer, UInt64(count), nonceBytes.baseAddress!, nextBlock, keyPointer)
                }
            }
        }
        guard status == 0 else {
            throw .libraryFailure(library: "libsodium", function: "crypto_stream_xor_ic", code: status, message: "keystream failed")
        }
        nextBlock += blocks
    }
}
