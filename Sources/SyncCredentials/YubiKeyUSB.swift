internal import Foundation
internal import CYkpers
internal import KDBXFormat
internal import Synchronization

/// The USB side of `YubiKeyChallengeResponse`: ykpers is initialised once and used by one thread at
/// a time (every call holds the mutex, whose value says whether ykpers was initialised).
final class YubiKeyUSB: Sendable {
    static let shared = YubiKeyUSB()
    private let initialized = Mutex(false)

    func response(slot: Int, serial: UInt32?, challenge: Data) throws -> Data {
        try initialized.withLock { initialized in
            if !initialized {
                guard yk_init() != 0 else { throw KDBXError.challengeResponseFailed("the USB library for YubiKeys (ykpers) could not start") }
                initialized = true
            }
            guard let key = mypass_yubikey_open(serial ?? 0) else {
                throw KDBXError.challengeResponseFailed(serial.map { "no YubiKey with serial \($0) found" } ?? "no YubiKey found (is it plugged in?)")
            }
            defer { yk_close_key(key) }
            var response = [UInt8](repeating: 0, count: 20)
            let answered = challenge.withUnsafeBytes { bytes in
                mypass_yubikey_challenge(key, Int32(slot), bytes.bindMemory(to: UInt8.self).baseAddress, UInt32(bytes.count), &response)
            }
            guard answered == 1 else {
                throw KDBXError.challengeResponseFailed("the YubiKey did not answer on slot \(slot) (not configured for HMAC-SHA1 challenge-response, or not touched)")
            }
            return Data(response)
        }
    }
}
