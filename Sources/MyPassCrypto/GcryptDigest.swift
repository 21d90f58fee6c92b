internal import CGcrypt

/// A libgcrypt message digest context (plain or HMAC), closed (and wiped by libgcrypt) when it goes.
///
/// SHA-2 comes from libgcrypt rather than libsodium because libgcrypt uses the CPU's SHA extensions:
/// 64 MiB of SHA-256 take 38 ms instead of libsodium's 267 ms here, and every open and save hashes
/// the whole file several times (HMAC blocks, fingerprints).
struct GcryptDigest: ~Copyable {
    private let handle: gcry_md_hd_t
    private let algorithm: Int32

    /// A context for `algorithm` (`GCRY_MD_*`), keyed for HMAC when `hmacKey` is given.
    init(algorithm: Int32, hmacKey: SecureBytes? = nil) {
        try? CryptoLibraries.ensureInitialized()
        var opened: gcry_md_hd_t?
        let status = gcry_md_open(&opened, algorithm, hmacKey == nil ? 0 : UInt32(GCRY_MD_FLAG_HMAC.rawValue))
        // Only an unknown algorithm or exhausted memory can fail here; neither is recoverable.
        guard status == 0, let opened else { preconditionFailure("libgcrypt: gcry_md_open failed (\(status))") }
        if let hmacKey {
            let keyStatus = hmacKey.withUnsafeBytes { gcry_md_setkey(opened, $0.baseAddress, $0.count) }
            precondition(keyStatus == 0, "libgcrypt: gcry_md_setkey failed (\(keyStatus))")
        }
        handle = opened
        self.algorithm = algorithm
    }

    deinit {
        gcry_md_close(handle)
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        gcry_md_write(handle, bytes.baseAddress, bytes.count)
    }

    /// Copies the digest into `output` (exactly the digest length); the context is done afterwards.
    func finish(into output: UnsafeMutableRawBufferPointer) {
        let length = Int(gcry_md_get_algo_dlen(algorithm))
        precondition(output.count == length, "digest buffer of the wrong size")
        guard let digest = gcry_md_read(handle, algorithm) else { preconditionFailure("libgcrypt: gcry_md_read failed") }
        output.copyMemory(from: UnsafeRawBufferPointer(start: digest, count: length))
    }
}
