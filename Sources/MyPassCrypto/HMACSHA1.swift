public import Foundation
internal import CGcrypt

/// HMAC-SHA1 (RFC 2104) through libgcrypt: what a YubiKey's challenge-response slot computes, for
/// its secret kept as a software key (Strongbox's "virtual hardware key", keepass-rs's local
/// challenge). Not used for anything else: SHA-1 is here only because the key component is defined so.
public enum HMACSHA1 {
    /// The 20-byte HMAC-SHA1 of `message` under `key`.
    public static func authenticationCode(for message: Data, key: SecureBytes) -> Data {
        var digest = GcryptDigest(algorithm: Int32(GCRY_MD_SHA1.rawValue), hmacKey: key)
        message.withUnsafeBytes { digest.update($0) }
        var output = Data(count: 20)
        output.withUnsafeMutableBytes { digest.finish(into: $0) }
        return output
    }
}
