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

extension PasswordGenerator {
    /// The character classes of `generate` (keepassxc-cli's: `-l`, `-U`, `-n`, `-s`, `-e`).
    public enum CharacterClass: Sendable, CaseIterable {
        case lower, upper, numeric, special, extended

        /// The characters of the class (extended: Latin-1 letters and signs, without the soft hyphen).
        public var characters: [Character] {
            switch self {
            case .lower: Array("abcdefghijklmnopqrstuvwxyz")
            case .upper: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            case .numeric: Array("0123456789")
            case .special: Array("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
            case .extended: (0xA1...0xFF).filter { $0 != 0xAD }.map { Character(Unicode.Scalar(UInt8($0))) }
            }
        }
    }

    /// What a generated password is made of.
    public struct Options: Sendable, Equatable {
        /// Its length (keepassxc-cli's default: 32).
        public var length = 32
        /// The classes drawn from (none chosen: lower, upper and numeric, as keepassxc-cli).
        public var classes: Set<CharacterClass> = [.lower, .upper, .numeric]
        /// Characters never used.
        public var excluded = ""
        /// Leave out characters easily mistaken for one another (`0O1lI|`).
        public var excludeSimilar = false
        /// At least one character of every chosen class.
        public var everyGroup = false
        /// A custom set used instead of the classes (nil: the classes).
        public var custom: String?

        /// Options with the defaults.
        public init() {}
    }

    /// Characters `excludeSimilar` leaves out.
    public static let similarCharacters = Set("0O1lI|")

    /// A password as `options` describe it, every allowed character equally likely (with
    /// `everyGroup`, drawn again until each class appears: still uniform over the passwords allowed).
    public static func generate(_ options: Options) throws -> String {
        let excluded = Set(options.excluded).union(options.excludeSimilar ? similarCharacters : [])
        let groups: [[Character]] = options.custom.map { [Array(Set($0)).sorted()] }
            ?? CharacterClass.allCases.filter { options.classes.contains($0) }.map(\.characters)
        let allowed = groups.map { $0.filter { !excluded.contains($0) } }.filter { !$0.isEmpty }
        let alphabet = allowed.flatMap { $0 }
        guard !alphabet.isEmpty else { throw VaultEditError.invalidName("no characters left to generate from") }
        guard (1...1024).contains(options.length) else { throw VaultEditError.invalidName("the length must be 1 to 1024") }
        guard !options.everyGroup || options.length >= allowed.count else {
            throw VaultEditError.invalidName("\(allowed.count) groups do not fit in \(options.length) characters")
        }
        while true {
            let password = try generate(length: options.length, alphabet: alphabet)
            if !options.everyGroup || allowed.allSatisfy({ group in password.contains(where: group.contains) }) { return password }
        }
    }
}
