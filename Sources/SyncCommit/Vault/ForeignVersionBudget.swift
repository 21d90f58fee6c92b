internal import SyncFiles
public import KDBXFormat

/// What a version of a vault that did not come from this device may cost to read and open: a
/// conflict copy in the folder, the server's version of a remote vault, a merge driver's input. It
/// is another version of the same database, written with the vault's own settings or ones a device
/// chose for it, so one far larger, or far costlier to derive, than the vault is junk planted to
/// cost memory and hours on every check. The one place for that rule.
public enum ForeignVersionBudget {
    /// The largest such version read for a vault of `vaultSize` bytes: eight times its size, at
    /// least 16 MiB (a version grows with a device's edits, attachments included, never eightfold).
    public static func sizeLimit(forVaultOf vaultSize: Int) -> Int64 {
        max(Int64(vaultSize) * 8, 16 << 20)
    }

    /// The KDF budget for a version of a vault whose KDF is `vaultKDF`, within `limits` (Argon2 at
    /// 2 GiB x 10,000 iterations is within the caps for a vault the user opens: hours). Argon2:
    /// twice the vault's memory (at least 256 MiB) and four times its iterations (at least 20);
    /// AES-KDF: four times the vault's rounds (at least 60 million, about a second).
    public static func limits(forVaultKDF vaultKDF: KDFParameters, within limits: ResourceLimits) -> ResourceLimits {
        var foreign = limits
        var memory: UInt64 = 256 << 20, iterations: UInt64 = 20, rounds: UInt64 = 60_000_000
        switch vaultKDF {
        case .argon2(let settings):
            memory = max(memory, settings.memoryBytes.multipliedReportingOverflow(by: 2).partialValue)
            iterations = max(iterations, settings.iterations.multipliedReportingOverflow(by: 4).partialValue)
        case .aesKDF(_, let vaultRounds):
            rounds = max(rounds, vaultRounds.multipliedReportingOverflow(by: 4).partialValue)
        }
        foreign.maximumArgon2MemoryBytes = min(limits.maximumArgon2MemoryBytes, memory)
        foreign.maximumArgon2Iterations = min(limits.maximumArgon2Iterations, iterations)
        foreign.maximumAESKDFRounds = min(limits.maximumAESKDFRounds, rounds)
        return foreign
    }
}
