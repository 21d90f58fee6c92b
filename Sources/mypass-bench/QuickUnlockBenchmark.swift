import Foundation
import KDBXFormat
import MyPassCore
import MyPassSync

/// `mypass-bench quick-unlock store|open FILE` (password "bench"): `store` unlocks with the password
/// and keeps the derived key in the kernel keyring (10 minutes); `open`, run as a fresh process (as an
/// AutoFill extension would be), unlocks from the keyring and reports its time and peak memory.
func runQuickUnlockBenchmark(mode: String, path: String) throws {
    let store = KernelKeyringDerivedKeyStore(lifetime: 600)
    let session = LockableVault(path: path, store: store)
    switch mode {
    case "store":
        let (_, seconds) = try timed { try session.unlock(with: CompositeKey(password: "bench")) }
        report("unlock with the password (KDF run), key stored", seconds, String(format: "peak RSS %.0f MB", peakResidentMegabytes()))
    case "open":
        let before = peakResidentMegabytes()
        let (unlocked, seconds) = try timed { try session.quickUnlock() }
        guard unlocked, let vault = session.vault else { print("no stored key (run `store` first)"); return }
        report("quick unlock (no KDF), \(vault.root.allEntries().count) entries", seconds,
               String(format: "peak RSS %.0f MB (%.0f MB before opening)", peakResidentMegabytes(), before))
    default:
        print("usage: mypass-bench quick-unlock store|open FILE")
    }
}
