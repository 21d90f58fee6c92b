public import Foundation

/// The properties of an entry that most entries leave at their defaults (colours, override URL,
/// custom icon, auto-type, custom data, unknown elements). `Entry` keeps them behind one shared,
/// immutable reference (`Shared`): an entry and each of its history items is then about half as
/// wide, and all entries with the defaults point at the same instance.
struct EntryDetails: Sendable, Hashable {
    var customIconUUID: UUID? = nil
    var foregroundColor = ""
    var backgroundColor = ""
    var overrideURL = ""
    var qualityCheck: Bool? = nil
    var autoType = AutoType()
    var customData: [CustomDataItem] = []
    var previousParentGroup: UUID? = nil
    var preserved: [PreservedXML] = []

    /// An immutable holder of details; a change makes a new holder, so copies of an entry never see it.
    final class Shared: Sendable, Hashable {
        let value: EntryDetails

        /// The holder every entry with default details shares.
        private static let defaults = Shared(value: EntryDetails())

        private init(value: EntryDetails) {
            self.value = value
        }

        /// The holder for `value`: the shared default one when `value` is all defaults.
        static func holding(_ value: EntryDetails) -> Shared {
            value == defaults.value ? defaults : Shared(value: value)
        }

        /// This holder when `newValue` is already the value at `path` (a reader sets every property
        /// it finds, and most are the defaults); otherwise a holder with `newValue` there.
        func updating<Value: Equatable>(_ path: WritableKeyPath<EntryDetails, Value>, to newValue: Value) -> Shared {
            guard value[keyPath: path] != newValue else { return self }
            var changed = value
            changed[keyPath: path] = newValue
            return Self.holding(changed)
        }

        static func == (lhs: Shared, rhs: Shared) -> Bool {
            lhs === rhs || lhs.value == rhs.value
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(value)
        }
    }
}
