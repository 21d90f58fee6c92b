internal import MyPassCore

/// The history items of the entry being read, in storage kept from one entry to the next. They are
/// moved, not copied, into an array of exactly their number when the entry ends (`takeAll`), and
/// the reader looks at the last one in place (`last`): copying an entry retains and releases each of
/// its collections, which a tenth of reading a vault went to.
/// Confined to the reader's thread, like the reader.
final class HistoryItemBuffer {
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init() {
        capacity = 16
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    /// The last item in place, valid until the buffer next changes.
    var last: UnsafePointer<Entry>? {
        count > 0 ? UnsafePointer(storage + (count - 1)) : nil
    }

    func append(_ item: consuming Entry) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Entry>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = grown
            capacity *= 2
        }
        (storage + count).initialize(to: item)
        count += 1
    }

    /// Every item, moved into an array of exactly their number; the buffer is empty afterwards.
    func takeAll() -> [Entry] {
        guard count > 0 else { return [] }
        let items = [Entry](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: storage, count: count)
            initialized = count
        }
        count = 0
        return items
    }
}
