internal import Foundation
internal import MyPassCrypto

/// Encryption of the payload with the header's cipher, and of protected values with the inner
/// random stream.
enum PayloadCrypto {
    /// The block cipher `cipher` runs in CBC mode; nil for ChaCha20, a stream cipher.
    static func blockCipher(of cipher: PayloadCipher) -> BlockCipher? {
        switch cipher {
        case .aes256: .aes256
        case .twofish: .twofish256
        case .chaCha20: nil
        }
    }

    /// Encrypts `payload` in place (CBC ciphers pad with PKCS#7): the payload is held once.
    static func encrypt(inPlace payload: inout Data, cipher: PayloadCipher, key: SecureBytes, iv: Data) throws(KDBXError) {
        do {
            if let block = blockCipher(of: cipher) {
                try CBC.encrypt(inPlace: &payload, cipher: block, key: key, iv: iv)
            } else {
                try StreamCipher(.chaCha20, key: key, nonce: iv).apply(to: &payload)
            }
        } catch {
            throw .crypto(error)
        }
    }

    /// The length of `length` payload bytes once encrypted with `cipher` (CBC ciphers add 1-16 bytes of padding).
    static func encryptedLength(of length: Int, cipher: PayloadCipher) -> Int {
        blockCipher(of: cipher) == nil ? length : (length / 16 + 1) * 16
    }

    /// Encrypts a payload handed over in segments, in order, each in place: the segments together
    /// are the payload encrypted at once (`encrypt(inPlace:)`). Every segment but the last must be
    /// a whole number of cipher blocks.
    final class SegmentEncryptor {
        private enum Kind {
            case blockCipher(CBCEncryptor)
            case stream(StreamCipher)
        }
        private let kind: Kind

        init(cipher: PayloadCipher, key: SecureBytes, iv: Data) throws(KDBXError) {
            do {
                if let block = PayloadCrypto.blockCipher(of: cipher) {
                    kind = .blockCipher(try CBCEncryptor(cipher: block, key: key, iv: iv))
                } else {
                    kind = .stream(try StreamCipher(.chaCha20, key: key, nonce: iv))
                }
            } catch {
                throw .crypto(error)
            }
        }

        /// Encrypts the next segment in place; `isLast`: the end of the payload (a CBC cipher pads it).
        func encrypt(inPlace segment: inout Data, isLast: Bool) throws(KDBXError) {
            do {
                switch kind {
                case .blockCipher(let encryptor):
                    if isLast { try encryptor.finish(inPlace: &segment) } else { try encryptor.encrypt(inPlace: &segment) }
                case .stream(let stream):
                    try stream.apply(to: &segment)
                }
            } catch {
                throw .crypto(error)
            }
        }
    }

    /// Decrypts `payload` in place without removing CBC padding (so a caller can first tell a wrong
    /// key from corruption); `removePadding` strips it afterwards.
    static func decryptInPlaceKeepingPadding(
        _ payload: inout Data, cipher: PayloadCipher, key: SecureBytes, iv: Data
    ) throws(KDBXError) {
        do {
            switch cipher {
            case .aes256, .twofish:
                guard !payload.isEmpty, payload.count % 16 == 0 else {
                    throw KDBXError.corrupt("encrypted payload length \(payload.count) is not whole blocks")
                }
                try CBC.decrypt(inPlace: &payload, cipher: cipher == .aes256 ? .aes256 : .twofish256, key: key, iv: iv)
            case .chaCha20:
                try StreamCipher(.chaCha20, key: key, nonce: iv).apply(to: &payload)
            }
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch let error as KDBXError {
            throw error
        } catch {
            throw .corrupt("decryption failed")
        }
    }

    /// Removes PKCS#7 padding for CBC ciphers; a bad padding is corruption (the key was verified).
    static func removePadding(_ data: inout Data, cipher: PayloadCipher) throws(KDBXError) {
        guard cipher != .chaCha20 else { return }
        do {
            data.removeLast(try PKCS7.paddingLength(of: data, blockSize: 16))
        } catch {
            throw .corrupt("invalid padding at the end of the payload")
        }
    }

    /// The stream that masks protected values, keyed from the stored stream key.
    static func innerStream(_ algorithm: InnerStreamAlgorithm, key: Data) throws(KDBXError) -> StreamCipher? {
        do {
            switch algorithm {
            case .none:
                return nil
            case .salsa20:
                let nonce: [UInt8] = [0xE8, 0x30, 0x09, 0x4B, 0x97, 0x20, 0x5D, 0x2A]
                return try StreamCipher(.salsa20, key: SHA256.secureHash(key), nonce: nonce)
            case .chaCha20:
                let hash = SHA512.secureHash(key)
                return try StreamCipher(.chaCha20, key: hash.subrange(0..<32), nonce: hash.subrange(32..<44).unprotectedData())
            case .arcFourVariant:
                throw KDBXError.unsupported("ArcFour inner random stream")
            }
        } catch let error as CryptoError {
            throw .crypto(error)
        } catch let error as KDBXError {
            throw error
        } catch {
            throw .corrupt("inner stream")
        }
    }
}
