internal import Foundation

/// Values by UUID, held in one array and found through a dictionary of their positions. A
/// dictionary of the values themselves keeps a slot as wide as a value for every bucket, most of
/// them empty: a merge's tables of 100,000 entries took 40 MB each that way, about half as much this way.
struct UUIDTable<Value> {
    private var positions: [UUID: Int32]
    /// The values in the order they were added; a removed one leaves an empty slot.
    private var slots: [(id: UUID, value: Value?)] = []

    /// An empty table with room for `minimumCapacity` values.
    init(minimumCapacity: Int = 0) {
        positions = Dictionary(minimumCapacity: minimumCapacity)
        slots.reserveCapacity(minimumCapacity)
    }

    /// The value for `id`; setting nil removes it.
    subscript(id: UUID) -> Value? {
        get { positions[id].flatMap { slots[Int($0)].value } }
        set {
            if let position = positions[id] {
                slots[Int(position)].value = newValue
                if newValue == nil { positions[id] = nil }
            } else if let newValue {
                positions[id] = Int32(slots.count)
                slots.append((id, newValue))
            }
        }
    }

    /// The UUIDs held (a copy: the table may change while they are visited).
    var keys: Dictionary<UUID, Int32>.Keys { positions.keys }

    /// The values held, in the order they were added.
    var values: LazyMapSequence<LazyFilterSequence<LazyMapSequence<[(id: UUID, value: Value?)], Value?>>, Value> {
        slots.lazy.compactMap(\.value)
    }

    /// `transform` of each value held, in the order they were added; the values are read in place
    /// (`values` copies each one, and a merge's entry is costly to copy).
    func mapValues<T>(_ transform: (Value) -> T) -> [T] {
        var result: [T] = []
        result.reserveCapacity(positions.count)
        for index in slots.indices {
            if let transformed = slots[index].value.map(transform) { result.append(transformed) }
        }
        return result
    }

    /// The UUIDs whose values satisfy `predicate`, in the order they were added (values read in place).
    func keys(where predicate: (Value) -> Bool) -> [UUID] {
        slots.indices.compactMap { index in slots[index].value.map(predicate) == true ? slots[index].id : nil }
    }

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }
}

extension UUIDTable: Sendable where Value: Sendable {}

extension UUIDTable: Sequence {
    /// Each UUID with its value, in the order they were added.
    func makeIterator() -> some IteratorProtocol<(key: UUID, value: Value)> {
        slots.lazy.compactMap { slot in slot.value.map { (key: slot.id, value: $0) } }.makeIterator()
    }
}
