public import Foundation
internal import CSodium

/// Random bytes from the operating system's secure source (libsodium `randombytes_buf`),
/// for non-secret values such as seeds, salts and IVs. Keys use `SecureBytes(randomCount:)`.
public enum RandomBytes {
    /// `count` random bytes.
    public static func data(count: Int) throws(CryptoError) -> Data {
        try CryptoLibraries.ensureInitialized()
        guard count >= 0 else { throw .invalidParameter("negative random byte count") }
        var result = Data(count: count)
        result.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                randombytes_buf(base, buffer.count)
            }
        }
        return result
    }
}

extension RandomBytes {
    /// A number in `0..<upperBound`, every value equally likely (libsodium `randombytes_uniform`,
    /// which rejects the biased top of the range), for secrets such as the words of a passphrase.
    public static func uniform(below upperBound: UInt32) throws(CryptoError) -> UInt32 {
        try CryptoLibraries.ensureInitialized()
        guard upperBound > 0 else { throw .invalidParameter("empty random range") }
        return randombytes_uniform(upperBound)
    }
}
