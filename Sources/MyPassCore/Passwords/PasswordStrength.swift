internal import CZxcvbn
internal import Foundation

/// How hard a password is to guess, as zxcvbn estimates it (zxcvbn-c, the estimator and the bands
/// KeePassXC uses, so both tools rate a password alike).
public struct PasswordStrength: Sendable, Equatable {
    /// The password's length in characters.
    public let length: Int
    /// The estimated entropy in bits (log2 of the guesses an attacker with zxcvbn's model needs).
    public let entropyBits: Double
    /// The parts zxcvbn recognised, in the password's order.
    public let parts: [Part]

    /// log10 of the guesses needed.
    public var log10Guesses: Double { entropyBits * 0.301029995663981 }

    /// Bits that come from combining several parts rather than from any one of them.
    public var multipartExtraBits: Double { entropyBits - parts.reduce(0) { $0 + $1.entropyBits } }

    /// KeePassXC's bands: below 40 bits poor, below 75 weak, below 100 good, else excellent.
    public var rating: Rating {
        switch entropyBits {
        case ..<40: .poor
        case ..<75: .weak
        case ..<100: .good
        default: .excellent
        }
    }

    /// The verdict shown beside the bits.
    public enum Rating: String, Sendable, CaseIterable {
        case poor, weak, good, excellent
    }

    /// One recognised part of the password.
    public struct Part: Sendable, Equatable {
        /// What zxcvbn matched.
        public let kind: Kind
        /// The part itself.
        public let text: String
        /// Its entropy in bits.
        public let entropyBits: Double
        /// The same part occurs again in the password.
        public let repeated: Bool
    }

    /// The kinds of part zxcvbn recognises.
    public enum Kind: String, Sendable {
        case bruteForce = "Bruteforce", dictionary = "Dictionary", leetDictionary = "Dict+Leet", userWord = "User Words"
        case leetUserWord = "User+Leet", repeats = "Repeated", sequence = "Sequence", spatial = "Spatial", date = "Date"
        case year = "Year", longPassword = "Long password", other = "Unknown"

        init(_ type: ZxcTypeMatch_t) {
            let base = type.rawValue & ~MULTIPLE_MATCH.rawValue
            self = switch ZxcTypeMatch_t(rawValue: base) {
            case BRUTE_MATCH: .bruteForce
            case DICTIONARY_MATCH: .dictionary
            case DICT_LEET_MATCH: .leetDictionary
            case USER_MATCH: .userWord
            case USER_LEET_MATCH: .leetUserWord
            case REPEATS_MATCH: .repeats
            case SEQUENCE_MATCH: .sequence
            case SPATIAL_MATCH: .spatial
            case DATE_MATCH: .date
            case YEAR_MATCH: .year
            case LONG_PWD_MATCH: .longPassword
            default: .other
            }
        }
    }

    /// The estimate for `password`; `userWords` are words known to be weak for this user (their name,
    /// the site), rated as if on a list an attacker tries first.
    public init(of password: String, userWords: [String] = []) {
        var info: UnsafeMutablePointer<ZxcMatch_t>?
        let userDictionary = userWords.map { strdup($0) } + [nil]
        defer { userDictionary.forEach { free($0) } }
        let bytes = Array(password.utf8)
        let entropy = userDictionary.map { UnsafePointer($0) }.withUnsafeBufferPointer { dictionary in
            password.withCString { ZxcvbnMatch($0, UnsafeMutablePointer(mutating: dictionary.baseAddress), &info) }
        }
        defer { ZxcvbnFreeInfo(info) }
        var parts: [Part] = []
        var match = info
        while let current = match?.pointee {
            let range = Self.byteRange(in: bytes, begin: Int(current.Begin), length: Int(current.Length))
            parts.append(Part(kind: Kind(current.Type), text: String(decoding: bytes[range], as: UTF8.self),
                              entropyBits: current.Entrpy, repeated: current.Type.rawValue & MULTIPLE_MATCH.rawValue != 0))
            match = current.Next
        }
        self.length = password.count
        self.entropyBits = entropy
        self.parts = parts
    }

    /// zxcvbn-c counts positions in UTF-8 bytes (a part may split a character; it is shown with a
    /// replacement character there).
    private static func byteRange(in bytes: [UInt8], begin: Int, length: Int) -> Range<Int> {
        let lower = min(max(begin, 0), bytes.count)
        return lower..<min(max(lower, begin + length), bytes.count)
    }
}
