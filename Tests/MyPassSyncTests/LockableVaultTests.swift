import Foundation
import KDBXFormat
import MyPassCore
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Testing
import TestSupport

@Suite("Vault session: lock, unlock, quick unlock from a stored derived key", .serialized)
struct LockableVaultTests {
    /// Saves the workspace's vault again with AES-KDF salt `kdfSeed` (repeated) under `key`.
    static func resave(_ workspace: Workspace, kdfSeed: UInt8, key: CompositeKey) throws {
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: kdfSeed, count: 32), rounds: 10))
        try KDBXWriter.serialize(workspace.open(), settings: settings, key: key).file.write(to: URL(fileURLWithPath: workspace.vaultPath))
    }

    @Test("unlock shows the vault, lock drops it")
    func lockAndUnlock() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = LockableVault(path: workspace.vaultPath, store: nil)
        #expect(!session.isUnlocked && session.vault == nil)
        try session.unlock(with: Workspace.key)
        #expect(session.vault?.root.entries.map(\.title) == ["First"])
        session.lock()
        #expect(!session.isUnlocked && session.vault == nil)
        #expect(try !session.quickUnlock(), "no store: the password is needed")
    }

    @Test("quick unlock opens without the password and without any KDF run")
    func quickUnlockSkipsTheKDF() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let store = InMemoryDerivedKeyStore()
        try LockableVault(path: workspace.vaultPath, store: store).unlock(with: Workspace.key)
        // Caps that forbid the vault's KDF: an open with credentials is refused, quick unlock is not.
        let noKDF = ResourceLimits(maximumAESKDFRounds: 1)
        #expect(throws: KDBXError.self) { try KDBXReader.open(workspace.bytes(), key: Workspace.key, limits: noKDF) }
        let app = LockableVault(path: workspace.vaultPath, store: store, limits: noKDF)
        #expect(try app.quickUnlock())
        #expect(app.vault?.root.entries.map(\.title) == ["First"])
    }

    @Test("after the KDF salt changes (KeePassXC saves with a new one) quick unlock falls back to the password")
    func saltChanged() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let store = InMemoryDerivedKeyStore()
        let session = LockableVault(path: workspace.vaultPath, store: store)
        try session.unlock(with: Workspace.key)
        try Self.resave(workspace, kdfSeed: 9, key: Workspace.key)
        session.lock()
        #expect(try !session.quickUnlock())
        #expect(store.load(for: session.vaultID) == nil, "the stale key is forgotten")
        try session.unlock(with: Workspace.key)
        #expect(try session.quickUnlock())
    }

    @Test("a stored key that no longer opens the vault (password changed, same salt) is forgotten")
    func passwordChangedSameSalt() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let store = InMemoryDerivedKeyStore()
        let session = LockableVault(path: workspace.vaultPath, store: store)
        try session.unlock(with: Workspace.key)
        try Self.resave(workspace, kdfSeed: 2, key: CompositeKey(password: "new password"))  // Workspace's salt is 2 too.
        #expect(try !session.quickUnlock())
        #expect(store.load(for: session.vaultID) == nil)
    }

    @Test("the kernel keyring keeps the key for other processes' sessions and lets it expire")
    func kernelKeyring() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let store = KernelKeyringDerivedKeyStore(lifetime: 2)
        let session = LockableVault(path: workspace.vaultPath, store: store)
        defer { session.forgetQuickUnlock() }
        try session.unlock(with: Workspace.key)
        // Only the possessor may see or read it (the default also lets the user's other processes view it).
        #expect(store.permissions(for: session.vaultID) == 0x2f00_0000,
                "permissions \(String(store.permissions(for: session.vaultID) ?? 0, radix: 16))")
        let later = LockableVault(path: workspace.vaultPath, store: KernelKeyringDerivedKeyStore())
        #expect(try later.quickUnlock())
        #expect(later.vault?.root.entries.map(\.title) == ["First"])
        waitUntil("the key to expire from the kernel keyring", timeout: 15) { store.load(for: session.vaultID) == nil }
        #expect(store.load(for: session.vaultID) == nil, "expired")
        #expect(try !LockableVault(path: workspace.vaultPath, store: store).quickUnlock())
    }
}
