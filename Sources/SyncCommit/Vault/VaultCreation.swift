public import Foundation
public import SyncFiles
internal import SyncState
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto

/// A new vault file as KeePassXC makes one: KDBX 4, AES-256, Argon2d with 64 MiB and one lane per
/// core, its iterations calibrated on this machine so that opening takes about the decryption time
/// asked for (KeePassXC's default: 1,000 ms), gzip, and a recycle bin.
public enum VaultCreation {
    /// KeePassXC's default decryption time.
    public static let defaultDecryptionTime: TimeInterval = 1.0
    /// The Argon2 memory KeePassXC starts from.
    public static let argon2Memory: UInt64 = 64 << 20

    /// Writes a new vault named `name` at `path` with `credentials`, its KDF calibrated to
    /// `decryptionTime` seconds unless `change` names KDF settings; refuses to replace any file.
    /// Returns the format written.
    public static func create(
        at path: String, on fileSystem: FileSystem = .real, name: String, credentials: VaultCredentials, decryptionTime: TimeInterval = defaultDecryptionTime,
        change: FormatChange = FormatChange()
    ) throws -> VaultFormat {
        try change.validate()
        var settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: try calibratedArgon2d(for: decryptionTime, credentials: credentials),
                                      compression: .gzip)
        if change.kdf != nil || change.argon2Iterations != nil || change.argon2Memory != nil || change.argon2Parallelism != nil
            || change.aesRounds != nil || change.version != nil || change.cipher != nil || change.compression != nil {
            settings = try change.apply(to: settings)
        }
        let vault = Vault.empty(name: name).withRecycleBin()
        let (bytes, _) = try VerifiedEncoding.encode(vault, settings: settings, key: credentials.key, cachedKey: nil, limits: .standard)
        // Only where there is no file: the kernel refuses the rename otherwise (no window).
        let written = Result { () throws(SaveError) -> Fingerprint in try DurableFile.replace(atPath: path, on: fileSystem, with: bytes, policy: .onlyIf(nil)) }
        if case .failure(let error) = written {
            guard case .changedOnDisk = error else { throw error }
            throw FileError.system(operation: .create, path: path, errno: EEXIST, message: "a file exists there already; nothing was written")
        }
        return VaultFormat(settings: settings)
    }

    /// Argon2d at 64 MiB with one lane per core, its iterations set so that one derivation takes
    /// about `seconds` here (measured with three iterations after a warm-up run; at least 2 iterations).
    static func calibratedArgon2d(for seconds: TimeInterval, credentials: VaultCredentials) throws -> KDFParameters {
        let lanes = UInt32(max(1, min(ProcessInfo.processInfo.activeProcessorCount, 16)))
        var trial = KDFParameters.Argon2Settings(variant: .argon2d, salt: Data(count: 32), iterations: 1, memoryBytes: argon2Memory, parallelism: lanes)
        _ = try DerivedKey(compositeKey: credentials.key, kdf: .argon2(trial), limits: .standard)  // warm: the first touch of the memory
        trial.iterations = 3
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try DerivedKey(compositeKey: credentials.key, kdf: .argon2(trial), limits: .standard)
        let perIteration = max(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / 3, 0.001)
        trial.iterations = UInt64(max(2, min(Double(ResourceLimits.standard.maximumArgon2Iterations), (seconds / perIteration).rounded())))
        return try KDFParameters.argon2(trial).withFreshSalt()
    }
}
