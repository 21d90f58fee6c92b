import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The file `watch` and the daemon check a vault's credentials on when they start is read under one
/// rule (`VaultFile.readForCredentialCheck`): a copy standing in for a missing vault is a version
/// from elsewhere, held to the foreign budget whatever the credential kind (the keyring included);
/// the vault itself, once this device synced it, is read only up to the budget's size, and its KDF
/// is held to the budget when its costs differ from the synced version's. Refused at once (exit 6,
/// an `error` event from the daemon), nothing derived or written.
@Suite("Credential checks: the stand-in and the vault within the foreign budget", .serialized)
struct CredentialCheckBudgetTests {
    /// A version's Argon2 raised in its header, by anyone who can write the folder (no password).
    static let raisedMemory: UInt64 = 1 << 30, raisedIterations: UInt64 = 1000

    /// Every file of the state directory and its bytes.
    private func contents(of directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// The vault's file made `size` bytes long in place (its header kept, the rest a hole).
    private func stretch(_ path: String, to size: Int64) throws {
        let descriptor = open(path, O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        try #require(ftruncate(descriptor, off_t(size)) == 0)
    }

    @Test("keyring, the vault missing and a KDF bomb as `vault.kdbx..path1`: watch refuses the stand-in at once (exit 6, named), derives nothing, writes nothing")
    func keyringStandInBomb() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let vault = try ScratchVault()
        defer { vault.remove() }
        let stored = try session.tool(["keyring", "store", vault.vault, "--password-stdin"], input: ScratchVault.password + "\n")
        #expect(stored.status == 0, "\(stored.standardError)")
        let bytes = try vault.bytes()
        try FileManager.default.removeItem(atPath: vault.vault)
        let bomb = vault.vault + "..path1"
        let planted = try KDFBomb.made(from: bytes)
        try planted.write(to: URL(fileURLWithPath: bomb))
        let run = try BoundedRun(["watch", "--once", "--password-from", "keyring", "--state-dir", vault.stateDirectory, vault.vault],
                                 environment: session.environment)
        #expect(run.seconds < 15, "derived for the stand-in (\(run.seconds) s, exit \(run.status))")
        #expect(run.status == 6, "\(run.standardError)")
        #expect(run.standardError.contains("vault.kdbx..path1, standing in for the missing") && run.standardError.contains("nothing was derived"),
                "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: vault.vault), "rebuilt from the bomb")
        #expect(try Data(contentsOf: URL(fileURLWithPath: bomb)) == planted)
    }

    @Test("daemon, keyring, the vault missing and a KDF bomb as `vault.kdbx..path1`: the credential check is an error event at once, nothing derived")
    func daemonKeyringStandInBomb() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let vault = try home.vault("vault.kdbx", from: CLIFixtures.kdbx4)
        #expect(try session.tool(["keyring", "store", vault, "--password-stdin"], input: CLIFixtures.kdbx4Password + "\n").status == 0)
        let added = try home.tool(["daemon", "add", vault, "--password-from", "keyring"])
        #expect(added.status == 0, "\(added.standardError)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: vault))
        try FileManager.default.removeItem(atPath: vault)
        try KDFBomb.made(from: bytes).write(to: URL(fileURLWithPath: vault + "..path1"))
        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("error", vault: vault), "no refusal: the stand-in is being derived; \(daemon.outputText)")
        let detail = daemon.events("error", vault: vault).first?["detail"] as? String ?? ""
        #expect(detail.contains("standing in for the missing") && detail.contains("nothing was derived"), "\(detail)")
        #expect(daemon.state(of: vault) == "error")
        #expect(!FileManager.default.fileExists(atPath: vault))
    }

    @Test("watch after a sync here: the vault's header raised to Argon2 1 GiB x 1000 is refused at once (exit 6), a 2 GiB vault is not read; a moderately strengthened KDF still opens")
    func watchHoldsTheVaultToTheBase() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let first = try vault.run(["watch", "--once", vault.vault])
        #expect(first.status == 0 && first.standardOutput.contains("baseRecorded"), "\(first.standardError)")
        let synced = try vault.bytes()
        let state = try contents(of: vault.stateDirectory)
        let arguments = ["watch", "--once", "--password-stdin", "--state-dir", vault.stateDirectory, vault.vault]

        let raised = try KDFBomb.made(from: synced, memory: Self.raisedMemory, iterations: Self.raisedIterations)
        try raised.write(to: URL(fileURLWithPath: vault.vault))
        let refused = try BoundedRun(arguments, input: ScratchVault.password + "\n")
        #expect(refused.seconds < 15, "derived the raised KDF (\(refused.seconds) s, exit \(refused.status))")
        #expect(refused.status == 6, "\(refused.standardError)")
        #expect(refused.standardError.contains("key derivation settings changed since this device synced it")
                    && refused.standardError.contains("Argon2 memory"), "\(refused.standardError)")
        #expect(try vault.bytes() == raised)
        #expect(try contents(of: vault.stateDirectory) == state, "the state was written")

        try synced.write(to: URL(fileURLWithPath: vault.vault))
        try stretch(vault.vault, to: 2 << 30)
        let large = try BoundedRun(arguments, input: ScratchVault.password + "\n")
        #expect(large.seconds < 15, "read the 2 GiB file (\(large.seconds) s)")
        #expect(large.status == 6 && large.standardError.contains("was not read"), "\(large.standardError)")
        if let peak = large.peakMegabytes { #expect(peak < 200, "peak memory \(peak) MB: the file was read") }
        #expect(try contents(of: vault.stateDirectory) == state, "the state was written")

        // Another client's save with a stronger KDF, within the budget: taken in as before.
        try synced.write(to: URL(fileURLWithPath: vault.vault))
        let strengthened = vault.directory.appendingPathComponent("strengthened.kdbx").path
        let converted = try ToolRunner.run(["convert", vault.vault, "-o", strengthened, "--kdf-memory", String(64 << 20), "--password-stdin"],
                                           input: ScratchVault.password + "\n")
        #expect(converted.status == 0, "\(converted.standardError)")
        #expect(rename(strengthened, vault.vault) == 0)
        let opened = try BoundedRun(arguments, input: ScratchVault.password + "\n")
        #expect(opened.status == 0, "\(opened.standardError)")
        #expect(try contents(of: vault.stateDirectory) != state, "the strengthened version did not become the base")
    }

    @Test("daemon restarted after a sync: the vault's header raised to Argon2 1 GiB x 1000, then a 2 GiB vault, are error events at once; nothing derived or written")
    func daemonHoldsTheVaultToTheBase() throws {
        let home = try DaemonHome()
        let vault = try home.vault("vault.kdbx", from: CLIFixtures.kdbx4)
        let command = try home.passwordCommand(CLIFixtures.kdbx4Password, name: "vault.pw")
        #expect(try home.tool(["daemon", "add", vault, "--password-command", command]).status == 0)
        var daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: vault), "\(daemon.outputText)")
        #expect(daemon.end() == 0)
        let synced = try Data(contentsOf: URL(fileURLWithPath: vault))

        let raised = try KDFBomb.made(from: synced, memory: Self.raisedMemory, iterations: Self.raisedIterations)
        try raised.write(to: URL(fileURLWithPath: vault))
        daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("error", vault: vault), "no refusal: the raised KDF is being derived; \(daemon.outputText)")
        let refusal = daemon.events("error", vault: vault).first?["detail"] as? String ?? ""
        #expect(refusal.contains("key derivation settings changed since this device synced it"), "\(refusal)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == raised)
        #expect(daemon.end() == 0)

        try synced.write(to: URL(fileURLWithPath: vault))
        try stretch(vault, to: 2 << 30)
        daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("error", vault: vault), "\(daemon.outputText)")
        let large = daemon.events("error", vault: vault).first?["detail"] as? String ?? ""
        #expect(large.contains("was not read"), "\(large)")
        #expect(daemon.end() == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: vault)[.size] as? Int) == 2 << 30)
    }
}
