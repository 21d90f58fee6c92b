import Foundation
import MyPassCore
import MyPassCrypto

/// Timings of the crypto primitives that dominate opening and saving a vault.
func runCryptoBenchmarks() throws {
    let key = try SecureBytes(randomCount: 32)
    let seed = try RandomBytes.data(count: 32)
    let payload = try RandomBytes.data(count: 64 << 20)
    let iv = try RandomBytes.data(count: 16)
    let megabytes = Double(payload.count) / 1_048_576

    print("mypass-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, median of 5 runs")
    // Protected values as a vault holds them: one per password, 60,000 for 10,000 entries with history.
    let secrets = (0..<60_000).map { Array("pw-\($0)-ABCDEFGHIJKL".utf8) }
    let masking = medianSeconds(repetitions: 5) { for secret in secrets { _ = ProtectedValue(maskingUTF8: secret) } }
    report("mask 60,000 protected values", masking, String(format: "%.2f us each", masking / 60_000 * 1e6))
    let rounds: UInt64 = 1_000_000
    let aesKDF = try medianSeconds(repetitions: 5) { _ = try AESKDF.deriveKey(from: key, seed: seed, rounds: rounds) }
    report("AES-KDF, 1,000,000 rounds", aesKDF, String(format: "%.1f M rounds/s", Double(rounds) / aesKDF / 1e6))

    for variant in [Argon2.Variant.argon2d, .argon2id] {
        let parameters = Argon2.Parameters(variant: variant, iterations: 2, memoryKiB: 64 * 1024, parallelism: 2, salt: seed)
        let seconds = try medianSeconds(repetitions: 5) { _ = try Argon2.deriveKey(password: key, parameters: parameters) }
        report("\(variant), 64 MiB, t=2, p=2", seconds)
}

let aesEncrypt = try medianSeconds(repetitions: 5) { _ = try CBC.encrypt(payload, cipher: .aes256, key: key, iv: iv) }
report("AES-256-CBC encrypt 64 MiB", aesEncrypt, String(format: "%.0f MB/s", megabytes / aesEncrypt))
let encrypted = try CBC.encrypt(payload, cipher: .aes256, key: key, iv: iv)
let aesDecrypt = try medianSeconds(repetitions: 5) { _ = try CBC.decrypt(encrypted, cipher: .aes256, key: key, iv: iv) }
report("AES-256-CBC decrypt 64 MiB", aesDecrypt, String(format: "%.0f MB/s", megabytes / aesDecrypt))
let twofish = try medianSeconds(repetitions: 5) { _ = try CBC.decrypt(encrypted, cipher: .twofish256, key: key, iv: iv, padding: .none) }
report("Twofish-CBC decrypt 64 MiB", twofish, String(format: "%.0f MB/s", megabytes / twofish))
let chaCha = try medianSeconds(repetitions: 5) {
    _ = try StreamCipher(.chaCha20, key: key, nonce: Data(count: 12)).applied(to: payload)
}
report("ChaCha20 64 MiB", chaCha, String(format: "%.0f MB/s", megabytes / chaCha))
let sha = medianSeconds(repetitions: 5) { _ = SHA256.hash(payload) }
report("SHA-256 64 MiB", sha, String(format: "%.0f MB/s", megabytes / sha))
let hmac = medianSeconds(repetitions: 5) { _ = HMACSHA256.authenticationCode(for: payload, key: key) }
report("HMAC-SHA-256 64 MiB", hmac, String(format: "%.0f MB/s", megabytes / hmac))
}
