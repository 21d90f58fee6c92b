internal import MyPassCrypto

/// A growable run of values in one allocation, reused by the reader for everything it holds only
/// while an entry is read (element records, their text, the plain bytes of protected values, history
/// items). Its owner reads and writes the values in place and hands out pointers into it, valid
/// until the buffer next grows or shrinks: an array's reference counting, bounds and uniqueness
/// checks on every access were a quarter of the reader's work.
///
/// `holdsSecrets`: every byte it let go is zeroed first (storage left behind by growth, values
/// dropped, the buffer freed), for the plain bytes of protected values. Confined to its owner's thread.
struct ScratchBuffer<Element>: ~Copyable {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int
    /// How many values from `base` are initialized.
    private(set) var count = 0
    private let holdsSecrets: Bool

    init(capacity: Int, holdsSecrets: Bool = false) {
        self.capacity = capacity
        self.holdsSecrets = holdsSecrets
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        wipe(base, count)
        base.deallocate()
    }

    /// The value at `index` (below `count`), in place.
    subscript(index: Int) -> Element {
        unsafeAddress { UnsafePointer(base + index) }
        nonmutating unsafeMutableAddress { base + index }
    }

    /// The last value in place, valid until the buffer next changes.
    var last: UnsafePointer<Element>? {
        count > 0 ? UnsafePointer(base + (count - 1)) : nil
    }

    /// Makes room for `extra` more values after `count` (moving the values if it has to grow).
    mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grownCapacity = max(capacity * 2, count + extra)
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: grownCapacity)
        grown.moveInitialize(from: base, count: count)
        wipe(base, count)
        base.deallocate()
        base = grown
        capacity = grownCapacity
    }

    mutating func append(_ value: consuming Element) {
        reserve(1)
        (base + count).initialize(to: value)
        count += 1
    }

    /// Counts the `added` values the caller wrote after `count` (room made by `reserve`) as part of the buffer.
    mutating func didAppend(_ added: Int) {
        count += added
    }

    /// Drops the values from `newCount` on.
    mutating func removeAll(from newCount: Int) {
        guard newCount < count else { return }
        (base + newCount).deinitialize(count: count - newCount)
        wipe(base + newCount, count - newCount)
        count = newCount
    }

    /// Every value, moved into an array of exactly their number; the buffer is empty afterwards.
    mutating func takeAll() -> [Element] {
        guard count > 0 else { return [] }
        let values = [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: base, count: count)
            initialized = count
        }
        count = 0
        return values
    }

    /// Zeroes `count` values' worth of bytes at `start` when the buffer holds secrets (their values are trivial bytes).
    private func wipe(_ start: UnsafeMutablePointer<Element>, _ count: Int) {
        guard holdsSecrets else { return }
        MemoryMask.wipe(UnsafeMutableRawBufferPointer(start: start, count: count * MemoryLayout<Element>.stride))
    }
}
