internal import Foundation
internal import SyncFiles
internal import SyncState
public import MyPassCore
internal import MyPassCrypto

extension SecretFingerprint {
    /// HMAC-SHA-256 under a random key made for one merge (12 hex digits): equal secrets show equal
    /// fingerprints within that merge's explanation, and the key is gone with it.
    public static func forOneMerge() throws -> SecretFingerprint {
        let key = try SecureBytes(randomCount: 32)
        return SecretFingerprint { secret in
            HMACSHA256.authenticationCode(for: Data(secret.utf8), key: key).prefix(6).map { String(format: "%02x", $0) }.joined()
        }
    }
}
