internal import Foundation
package import KDBXFormat

/// A key derivation's settings without its random part (seed or salt, drawn anew on saves): two files
/// whose KDFs differ only by salt chose the same KDF. Ordered by strength where one is plainly weaker.
package struct KDFChoice: Equatable, Sendable {
    /// The parameters, salt emptied.
    package let parameters: KDFParameters

    /// The choice `kdf` stands for.
    package init(_ kdf: KDFParameters) {
        switch kdf {
        case .aesKDF(_, let rounds):
            parameters = .aesKDF(seed: Data(), rounds: rounds)
        case .argon2(var settings):
            settings.salt = Data()
            parameters = .argon2(settings)
        }
    }

    /// Whether this KDF is weaker than `other` in some respect (MERGE.md rule 13): AES-KDF against
    /// Argon2, fewer AES rounds, less Argon2 memory or fewer iterations. Two Argon2 settings can each
    /// be weaker than the other (more memory, fewer iterations): then `work` decides.
    package func isWeaker(than other: KDFChoice) -> Bool {
        switch (parameters, other.parameters) {
        case (.aesKDF, .argon2): true
        case (.argon2, .aesKDF): false
        case (.aesKDF(_, let mine), .aesKDF(_, let theirs)): mine < theirs
        case (.argon2(let mine), .argon2(let theirs)): mine.memoryBytes < theirs.memoryBytes || mine.iterations < theirs.iterations
        }
    }

    /// Argon2's cost in memory passes (memory times iterations); AES-KDF's rounds (only compared with AES-KDF).
    var work: Double {
        switch parameters {
        case .aesKDF(_, let rounds): Double(rounds)
        case .argon2(let settings): Double(settings.memoryBytes) * Double(settings.iterations)
        }
    }

    /// Of two different choices, the stronger: the one the other is weaker than; when each is weaker
    /// in some respect, the one with more work; nil when neither is stronger.
    package static func stronger(_ a: KDFChoice, _ b: KDFChoice) -> KDFChoice? {
        let aWeaker = a.isWeaker(than: b), bWeaker = b.isWeaker(than: a)
        switch (aWeaker, bWeaker) {
        case (true, false): return b
        case (false, true): return a
        case (true, true) where a.work != b.work: return a.work > b.work ? a : b
        default: return nil
        }
    }

    /// The KDF as the change log and `--explain` show it (no salt): `argon2id (iterations 2, memory 64 MiB, parallelism 2, version 0x13)`.
    package var text: String {
        VaultFormat(settings: FormatSettings(version: .v4_0, cipher: .aes256, kdf: parameters)).kdfText
    }
}
