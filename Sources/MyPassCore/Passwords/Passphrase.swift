internal import Foundation
internal import MyPassCrypto

/// The words a passphrase is drawn from: each distinct, in the list's order.
public struct Wordlist: Sendable, Equatable {
    /// The words.
    public let words: [String]

    /// Fewer words than this make each word worth under 10 bits: refused rather than silently weak.
    public static let minimumCount = 1024

    /// The bits one word adds.
    public var bitsPerWord: Double { log2(Double(words.count)) }

    /// The words of `text`: one per line, either the word alone or after dice digits and white space
    /// (`11111<TAB>abacus`, as EFF and diceware lists are published). Blank lines are skipped and
    /// duplicates kept once, so a repeated word cannot bias the draw.
    public init(text: String) throws(VaultEditError) {
        var seen = Set<String>()
        var words: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let last = fields.last else { continue }
            let isDiceLine = fields.count == 2 && fields[0].allSatisfy(\.isNumber)
            guard fields.count == 1 || isDiceLine else {
                throw .invalidName("wordlist line \"\(line.prefix(40))\" is neither a word nor dice digits and a word")
            }
            let word = String(last)
            if seen.insert(word).inserted { words.append(word) }
        }
        guard words.count >= Self.minimumCount else {
            throw .invalidName("the wordlist has \(words.count) distinct words; a passphrase needs at least \(Self.minimumCount)")
        }
        self.words = words
    }
}

/// Passphrases: words drawn uniformly and independently from a wordlist (randomness from libsodium).
public enum PassphraseGenerator {
    /// keepassxc-cli's default word count.
    public static let defaultWordCount = 7

    /// `count` words from `wordlist`, joined by `separator`.
    public static func generate(words count: Int = defaultWordCount, from wordlist: Wordlist, separator: String = " ") throws -> String {
        guard (1...100).contains(count) else { throw VaultEditError.invalidName("the word count must be 1 to 100") }
        var chosen: [String] = []
        for _ in 0..<count {
            chosen.append(wordlist.words[Int(try RandomBytes.uniform(below: UInt32(wordlist.words.count)))])
        }
        return chosen.joined(separator: separator)
    }
}
