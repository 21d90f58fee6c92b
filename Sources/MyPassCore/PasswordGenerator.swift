internal import MyPassCrypto

/// Random passwords from the operating system's secure source, every character equally likely.
public enum PasswordGenerator {
    /// Letters, digits and punctuation that survive copy and paste and shells.
    public static let defaultAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.,;:!?@#$%^&*+=")

    /// A password of `length` characters drawn from `alphabet` (rejection sampling: no bias).
    public static func generate(length: Int = 24, alphabet: [Character] = defaultAlphabet) throws -> String {
        precondition(!alphabet.isEmpty && alphabet.count <= 256, "alphabet must hold 1 to 256 characters")
        let limit = 256 - 256 % alphabet.count
        var characters: [Character] = []
        characters.reserveCapacity(length)
        while characters.count < length {
            let random = try SecureBytes(randomCount: length * 2)
            random.withUnsafeBytes { bytes in
                for byte in bytes where Int(byte) < limit && characters.count < length {
                    characters.append(alphabet[Int(byte) % alphabet.count])
                }
            }
        }
        return String(characters)
    }
}
