public import Foundation
internal import CGcrypt

/// The hash functions one-time passwords use (RFC 4226 / RFC 6238).
public enum OTPHashAlgorithm: String, Sendable, CaseIterable {
    case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"

    var gcryptAlgorithm: Int32 {
        switch self {
        case .sha1: Int32(GCRY_MD_SHA1.rawValue)
        case .sha256: Int32(GCRY_MD_SHA256.rawValue)
        case .sha512: Int32(GCRY_MD_SHA512.rawValue)
        }
    }
}

/// HMAC-SHA-1/256/512 for one-time passwords, from libgcrypt (libsodium has no HMAC-SHA-1).
public enum OneTimePasswordHMAC {
    /// The HMAC of `message` under `key` with `algorithm`.
    public static func authenticationCode(_ algorithm: OTPHashAlgorithm, key: SecureBytes, message: Data) throws(CryptoError) -> Data {
        try CryptoLibraries.ensureInitialized()
        var opened: gcry_md_hd_t?
        let openStatus = gcry_md_open(&opened, algorithm.gcryptAlgorithm, UInt32(GCRY_MD_FLAG_HMAC.rawValue))
        guard openStatus == 0, let handle = opened else {
            throw .libraryFailure(library: "libgcrypt", function: "gcry_md_open", code: Int32(truncatingIfNeeded: openStatus), message: "")
        }
        defer { gcry_md_close(handle) }
        let keyStatus = key.withUnsafeBytes { gcry_md_setkey(handle, $0.baseAddress, $0.count) }
        guard keyStatus == 0 else {
            throw .libraryFailure(library: "libgcrypt", function: "gcry_md_setkey", code: Int32(truncatingIfNeeded: keyStatus), message: "")
        }
        message.withUnsafeBytes { gcry_md_write(handle, $0.baseAddress, $0.count) }
        let length = Int(gcry_md_get_algo_dlen(algorithm.gcryptAlgorithm))
        guard let digest = gcry_md_read(handle, algorithm.gcryptAlgorithm) else {
            throw .libraryFailure(library: "libgcrypt", function: "gcry_md_read", code: -1, message: "no digest")
        }
        return Data(bytes: digest, count: length)
    }
}
