public import Foundation
internal import CSodium

/// Comparisons whose running time does not depend on where two buffers differ.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes (`sodium_memcmp`). Lengths are not secret:
    /// buffers of different lengths are unequal at once.
    public static func isEqual(_ lhs: some ContiguousBytes, _ rhs: some ContiguousBytes) -> Bool {
        lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                guard left.count == right.count else { return false }
                guard left.count > 0 else { return true }
                return sodium_memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }
}
