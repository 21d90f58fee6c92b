public import Foundation
internal import Synchronization
internal import SyncFiles
internal import SyncState
public import KDBXFormat
public import MyPassCrypto
internal import CKeyutils

/// Where quick unlock keeps derived keys: the KDF result of a vault, valid while the vault's KDF
/// settings and salt stay the same (the 2Stable idea: keep the expensive Argon2 run out of
/// memory-limited processes such as an AutoFill extension).
public protocol DerivedKeyStore: Sendable {
    /// Keeps `key` for the vault `vaultID` (replacing an earlier one) until `expiry` (nil: for the
    /// store's own lifetime).
    func store(_ key: DerivedKey, for vaultID: String, until expiry: Date?) throws
    /// The stored key, if still there.
    func load(for vaultID: String) -> StoredDerivedKey?
    /// Forgets the key of `vaultID`.
    func remove(for vaultID: String)
}

extension DerivedKeyStore {
    /// Keeps `key` for the vault `vaultID` for the store's own lifetime.
    public func store(_ key: DerivedKey, for vaultID: String) throws { try store(key, for: vaultID, until: nil) }
}

/// A derived key as a store keeps it.
public struct StoredDerivedKey: Sendable {
    /// The KDF result.
    public let transformedKey: SecureBytes
    /// The fingerprint of the KDF settings and salt it was derived for.
    public let kdfFingerprint: Data
    /// When the store drops it (nil: with the process).
    public let expires: Date?
}

/// Keys held by this process only (zeroed when removed or when the store goes away).
public final class InMemoryDerivedKeyStore: DerivedKeyStore, Sendable {
    private let keys = Mutex<[String: StoredDerivedKey]>([:])

    /// An empty store.
    public init() {}

    /// Keeps `key` for `vaultID` until `expiry` (nil: until removed).
    public func store(_ key: DerivedKey, for vaultID: String, until expiry: Date?) {
        let stored = StoredDerivedKey(transformedKey: key.storageForm, kdfFingerprint: key.kdf.fingerprint, expires: expiry)
        keys.withLock { $0[vaultID] = stored }
    }

    /// The key kept for `vaultID`, if it has not expired.
    public func load(for vaultID: String) -> StoredDerivedKey? {
        guard let stored = keys.withLock({ $0[vaultID] }), (stored.expires ?? .distantFuture) > Date() else { return nil }
        return stored
    }

    /// Forgets the key kept for `vaultID`.
    public func remove(for vaultID: String) {
        _ = keys.withLock { $0.removeValue(forKey: vaultID) }
    }
}

/// Keys in the Linux kernel's session keyring (libkeyutils): outside any process's memory, gone
/// after `lifetime` seconds (or at the given expiry) or when the session ends, possessor-only. The
/// processes of one login session (a terminal and what it starts) share its session keyring and can
/// read the key; processes of the same user in another session (another SSH login, a service) cannot
/// find or read it, and the user keyring every process of the user reaches never holds it. A
/// process without a session keyring of its own uses the user's default session keyring, which any
/// process of the user can join (`sessionIsUserDefault`). The key's description names the vault by a hash of its
/// path, never the path. Payload: the KDF fingerprint (32 bytes), the expiry (unix seconds, 8 bytes
/// little-endian), then the derived key.
public struct KernelKeyringDerivedKeyStore: DerivedKeyStore {
    /// How long a key is kept when no expiry is given (seconds).
    public let lifetime: UInt32

    /// A store in the session keyring whose keys expire after `lifetime` seconds by default.
    public init(lifetime: UInt32 = 8 * 3600) { self.lifetime = lifetime }

    /// Whether the kernel keyring can be used here (seccomp filters in some containers forbid it).
    public static var isAvailable: Bool {
        keyctl_get_keyring_ID(KEY_SPEC_SESSION_KEYRING, 0) >= 0
    }

    /// The session keyring (without creating a new one for this process alone, which would end with
    /// it: a process without one gets the user's default session keyring).
    private static func sessionKeyring() -> key_serial_t {
        keyctl_get_keyring_ID(KEY_SPEC_SESSION_KEYRING, 0)
    }

    /// Whether this process has no session keyring of its own and uses the user's default one
    /// (`_uid_ses.UID`): any process of the user can join that one and read what it holds.
    public static var sessionIsUserDefault: Bool {
        var buffer: UnsafeMutablePointer<CChar>?
        guard keyctl_describe_alloc(sessionKeyring(), &buffer) >= 0, let buffer else { return true }
        defer { free(buffer) }
        // "type;uid;gid;perm;description"
        let description = String(cString: buffer).split(separator: ";", maxSplits: 4).last ?? ""
        return description.hasPrefix("_uid_ses.")
    }

    /// `mypass-sync:derived-key:` and the first 16 hex digits of the SHA-256 of `vaultID` (a path).
    static func description(_ vaultID: String) -> String {
        "mypass-sync:derived-key:" + SHA256.hexHash(Data(vaultID.utf8)).prefix(16)
    }

    private func description(_ vaultID: String) -> String { Self.description(vaultID) }

    private func find(_ vaultID: String) -> key_serial_t {
        key_serial_t(truncatingIfNeeded: keyctl_search(Self.sessionKeyring(), "user", description(vaultID), 0))
    }

    /// Keeps `key` for `vaultID` in the kernel keyring, possessor-only, until `expiry`.
    public func store(_ key: DerivedKey, for vaultID: String, until expiry: Date?) throws {
        let expires = expiry ?? Date().addingTimeInterval(TimeInterval(lifetime))
        let seconds = UInt32(clamping: Int64(expires.timeIntervalSinceNow.rounded(.up)))
        guard seconds > 0 else { return remove(for: vaultID) }
        var payload = [UInt8](key.kdf.fingerprint)
        withUnsafeBytes(of: Int64(expires.timeIntervalSince1970.rounded(.up)).littleEndian) { payload.append(contentsOf: $0) }
        key.storageForm.withUnsafeBytes { payload.append(contentsOf: $0) }
        defer { MemoryMask.wipe(&payload) }
        let serial = add_key("user", description(vaultID), payload, payload.count, Self.sessionKeyring())
        guard serial >= 0 else {
            throw FileError.system(operation: .addKey, path: "kernel keyring", errno: errno, message: String(cString: strerror(errno)))
        }
        // The expiry first (it needs the set-attribute permission), then only the possessor may see,
        // read, find or change it: the default lets every process of the user view it. A key that
        // cannot get both is removed at once, never left without an expiry.
        guard keyctl_set_timeout(serial, seconds) == 0, keyctl_setperm(serial, Self.permissions) == 0 else {
            let failure = errno
            _ = keyctl_invalidate(serial)
            throw FileError.system(operation: .keyctl, path: "kernel keyring", errno: failure, message: String(cString: strerror(failure)))
        }
    }

    /// Possessor only: view, read, search, write, set attributes (no link, no user/group/other bits).
    static let permissions = key_perm_t(KEY_POS_VIEW | KEY_POS_READ | KEY_POS_SEARCH | KEY_POS_WRITE | KEY_POS_SETATTR)

    /// The key's permission mask as the kernel reports it (nil when there is no such key).
    func permissions(for vaultID: String) -> UInt32? {
        let serial = find(vaultID)
        guard serial > 0 else { return nil }
        var buffer: UnsafeMutablePointer<CChar>?
        guard keyctl_describe_alloc(serial, &buffer) >= 0, let buffer else { return nil }
        defer { free(buffer) }
        // "type;uid;gid;perm;description", perm in hex.
        let fields = String(cString: buffer).split(separator: ";", maxSplits: 4)
        return fields.count > 3 ? UInt32(fields[3], radix: 16) : nil
    }

    /// The key kept for `vaultID`, if any and not expired.
    public func load(for vaultID: String) -> StoredDerivedKey? {
        let serial = find(vaultID)
        guard serial > 0 else { return nil }
        var buffer: UnsafeMutableRawPointer?
        let length = keyctl_read_alloc(serial, &buffer)
        guard length > 40, let buffer else { return nil }
        defer {
            memset(buffer, 0, Int(length))
            free(buffer)
        }
        let bytes = UnsafeRawBufferPointer(start: buffer, count: Int(length))
        let seconds = bytes[32..<40].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return StoredDerivedKey(transformedKey: SecureBytes(Data(bytes[40...])), kdfFingerprint: Data(bytes[..<32]),
                                expires: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Unlinks the key kept for `vaultID`.
    public func remove(for vaultID: String) {
        let serial = find(vaultID)
        if serial > 0 { _ = keyctl_invalidate(serial) }
    }
}
