public import Foundation
internal import SyncFiles
public import KDBXFormat

/// What a version of a vault that did not come from this device may cost to read and open: a
/// conflict copy in the folder, a version a sync engine renamed aside, the server's version of a
/// remote vault, a merge input, a git blob. It is another version of the same database, written with
/// the vault's own settings or ones a device chose for it, so one far larger, or far costlier to
/// derive, than the vault is junk planted to cost memory and hours on every check. The one place
/// for that rule; `ForeignVersion` is the one step that applies it.
public struct ForeignVersionBudget: Sendable, Equatable {
    /// The largest such version read, in bytes.
    public let sizeLimit: Int64
    /// The caps its header and KDF are checked against before any derivation.
    public let limits: ResourceLimits
    /// The vault's allowance of time for opening such versions, shared by all of them (nil: none kept).
    public private(set) var allowance: ForeignWorkAllowance?

    /// This budget, with the openings under it counted against `allowance`.
    public func metered(by allowance: ForeignWorkAllowance?) -> ForeignVersionBudget {
        var metered = self
        metered.allowance = allowance
        return metered
    }

    /// Budgets are equal when their caps are (the allowance is the vault's, not a cap).
    public static func == (lhs: ForeignVersionBudget, rhs: ForeignVersionBudget) -> Bool {
        lhs.sizeLimit == rhs.sizeLimit && lhs.limits == rhs.limits
    }

    /// The budget for versions of a vault of `vaultSize` bytes whose KDF is `vaultKDF`, within
    /// `limits` (Argon2 at 2 GiB x 10,000 iterations is within the caps for a vault the user opens:
    /// hours). Size: eight times the vault's, at least 16 MiB (a version grows with a device's
    /// edits, attachments included, never eightfold). Argon2: twice the vault's memory (at least
    /// 256 MiB) and four times its iterations (at least 20); AES-KDF: four times the vault's rounds
    /// (at least 60 million, about a second). Inflated payload: a hundred times the vault's file (at
    /// least 64 MiB): KeePass programs' XML compresses about twentyfold, so a version with room to grow
    /// fits, and a small file holding gigabytes of XML is refused after 64 MiB, not read to the end.
    public init(vaultSize: Int, vaultKDF: KDFParameters, within limits: ResourceLimits) {
        sizeLimit = max(Int64(vaultSize) * 8, 16 << 20)
        var foreign = limits
        foreign.maximumPayloadBytes = min(limits.maximumPayloadBytes, max(vaultSize.multipliedReportingOverflow(by: 100).partialValue, 64 << 20))
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
        self.limits = foreign
    }

    /// The budget measured against `reference`, the bytes of a version of this device's (the one it
    /// synced, else the vault's file now); without one that reads as KDBX, `withoutReference`.
    public init(measuredAgainst reference: Data?, within limits: ResourceLimits) {
        guard let reference, let header = try? KDBXReader.header(of: reference) else {
            self = .withoutReference(within: limits)
            return
        }
        self.init(vaultSize: reference.count, vaultKDF: header.kdf, within: limits)
    }

    /// The budget when no version of this device's is there to measure against (a git blob shown by
    /// textconv, a vault to rebuild from copies before any was synced here): what the KDFs that
    /// KeePass programs choose fit, with room — Argon2 up to 1 GiB and 16 GiB of work (memory x
    /// iterations: 64 MiB x 256, 1 GiB x 16; tens of seconds at most), AES-KDF up to 300 million
    /// rounds (about five seconds), 256 MiB of file, 512 MiB of inflated payload.
    public static func withoutReference(within limits: ResourceLimits) -> ForeignVersionBudget {
        var foreign = limits
        foreign.maximumPayloadBytes = min(limits.maximumPayloadBytes, 512 << 20)
        foreign.maximumArgon2MemoryBytes = min(limits.maximumArgon2MemoryBytes, 1 << 30)
        foreign.maximumArgon2Work = min(limits.maximumArgon2Work, 16 << 30)
        foreign.maximumAESKDFRounds = min(limits.maximumAESKDFRounds, 300_000_000)
        return ForeignVersionBudget(sizeLimit: 256 << 20, limits: foreign)
    }

    /// How many different keys (stored passwords tried one after the other) may be derived for one
    /// version of KDF `kdf`: as many as fit the budget's total (work for Argon2, rounds for AES-KDF)
    /// together, at least one, at most `maximum`.
    public func derivations(of kdf: KDFParameters, atMost maximum: Int) -> Int {
        let fitting: UInt64
        switch kdf {
        case .argon2(let settings):
            let work = settings.memoryBytes.multipliedReportingOverflow(by: settings.iterations)
            fitting = work.overflow ? 1 : limits.maximumArgon2Work / max(work.partialValue, 1)
        case .aesKDF(_, let rounds):
            fitting = limits.maximumAESKDFRounds / max(rounds, 1)
        }
        return max(1, min(maximum, Int(clamping: fitting)))
    }

    private init(sizeLimit: Int64, limits: ResourceLimits) {
        self.sizeLimit = sizeLimit
        self.limits = limits
    }
}
