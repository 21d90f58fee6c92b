internal import Foundation
package import SyncFiles
package import SyncState
package import KDBXFormat

/// Conflict copies opened while the watch waits out its debounce: a copy's arrival starts reading
/// and opening it at once (its KDF included, which for a copy saved elsewhere, with its own salt, is
/// the longest step), so that the check after the debounce finds it open. The check reads the copy
/// itself as always and uses an opened one only if it was opened from exactly those bytes (the
/// fingerprint's SHA-256): a copy changed or swapped since is opened again. The same budget applies as
/// to the check's own open (`ForeignVersion`), at most `capacity` copies are kept open, and a copy
/// that was refused is remembered as refused (a few bytes each), so that the check does not derive
/// its key a second time.
// @unchecked: every stored property is read and written only while `condition` (an NSCondition: the
// check waits on it for a copy still being opened, which `Mutex` cannot) is locked.
package final class CopyPrefetch: @unchecked Sendable {
    /// How a copy is read and opened: what the check itself would use.
    package struct Parameters: Sendable {
        let key: CompositeKey
        let cachedKey: DerivedKey?
        /// The file system the copies are on.
        let fileSystem: FileSystem
        /// The vault's budget for versions from elsewhere.
        let budget: ForeignVersionBudget
        /// Where a copy that opens is kept at once (a version this device saw: the sync engine may
        /// overwrite or delete the copy before the check runs); nil: nowhere.
        package var pendingVersions: PendingVersions?
        /// Which copies that open are kept aside, by inode: the watcher's rule, given with the
        /// parameters (every one unless told otherwise).
        package var keepsPending: @Sendable (UInt64) -> Bool = { _ in true }

        /// Copies opened with `key` (no derivation where `cachedKey` fits) on `fileSystem`, within `budget`.
        package init(key: CompositeKey, cachedKey: DerivedKey?, fileSystem: FileSystem, budget: ForeignVersionBudget) {
            self.key = key
            self.cachedKey = cachedKey
            self.fileSystem = fileSystem
            self.budget = budget
        }
    }

    /// An empty cache.
    package init() {}

    /// Copies kept open at most (a folder full of planted copies must not fill the memory).
    static let capacity = 2
    private let condition = NSCondition()
    private var opened: [String: (fingerprint: Fingerprint, vault: Result<OpenedVault, ForeignVersion.Refusal>, budget: ForeignVersionBudget)] = [:]
    private var inFlight: Set<String> = []
    private var taken = 0

    /// How many opened copies checks have used (tests read it).
    package var hits: Int {
        condition.lock()
        defer { condition.unlock() }
        return taken
    }

    /// Starts opening the copy at `path` in the background, unless it is being opened; beyond the
    /// cache's capacity it is opened (and kept aside) without being cached.
    package func start(_ path: String, with parameters: Parameters) {
        condition.lock()
        defer { condition.unlock() }
        guard !inFlight.contains(path) else { return }
        // Nothing is read ahead while the vault's allowance for opening copies is spent (a copy
        // rewritten many times a second must not be read each time): the check tries it later.
        guard parameters.budget.allowance?.admits(at: Date()) ?? true else { return }
        let caches = openCount + inFlight.count < Self.capacity || opened[path] != nil
        guard caches || parameters.pendingVersions != nil else { return }
        inFlight.insert(path)
        opened[path] = nil
        // A serial queue of its own, not the shared dispatch pool: on a two-core machine that pool runs
        // two items at once, and other work queued there must never hold up the open a check waits
        // for; one at a time, so a folder of planted copies costs one thread, not one each.
        queue.async {
            let result = Self.open(path, with: parameters)
            self.condition.lock()
            self.inFlight.remove(path)
            if let result, caches || result.vault.isRefusal { self.opened[path] = (result.fingerprint, result.vault, parameters.budget) }
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// Where copies are opened ahead, one after another (a queue of its own gets a thread of its own).
    private let queue = DispatchQueue(label: "mypass-sync copy prefetch", qos: .userInitiated)

    /// The longest a check waits for an open in progress; then it opens the copy itself.
    static let longestWait: TimeInterval = 30

    /// The copy at `path` opened (or refused) from content with `fingerprint`'s SHA-256 (bytes the
    /// caller read within its own size limit) under the same budget as `parameters`, if it was
    /// (waiting for an open in progress, `longestWait` at most: nil after that, and the check opens the
    /// copy itself); a version of another database than `identity` is refused.
    /// It leaves the cache either way.
    package func take(
        _ path: String, matching fingerprint: Fingerprint, under parameters: Parameters, identity: DatabaseIdentity
    ) -> Result<OpenedVault, ForeignVersion.Refusal>? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(Self.longestWait)
        while inFlight.contains(path) {
            guard condition.wait(until: deadline) || !inFlight.contains(path) else { return nil }
        }
        guard let entry = opened.removeValue(forKey: path), entry.fingerprint.sha256 == fingerprint.sha256,
              entry.budget == parameters.budget else { return nil }
        taken += 1
        return entry.vault.flatMap { DatabaseIdentity($0.vault) == identity ? .success($0) : .failure(.otherDatabase) }
    }

    /// Copies kept open (refusals are not counted: they hold no vault).
    private var openCount: Int { opened.values.filter { !$0.vault.isRefusal }.count }

    /// Returns once no copy is being opened (tests use it).
    package func waitForOpens() {
        condition.lock()
        while !inFlight.isEmpty { condition.wait() }
        condition.unlock()
    }

    /// Forgets opened copies that are no longer among `present` (taken out of the folder meanwhile).
    func keepOnly(_ present: Set<String>) {
        condition.lock()
        opened = opened.filter { present.contains($0.key) }
        condition.unlock()
    }

    /// Reads the copy as the check does (`ForeignVersion`: a regular file, relative to its folder,
    /// within the budget) and opens it, or the reason it was refused; nil when it could not be read
    /// (the check then finds out why).
    private static func open(_ path: String, with parameters: Parameters)
        -> (fingerprint: Fingerprint, vault: Result<OpenedVault, ForeignVersion.Refusal>)? {
        guard let (folder, name) = try? DirectoryHandle.parent(of: path, on: parameters.fileSystem),
              let read = try? ForeignVersion.read(name, in: folder, budget: parameters.budget) else { return nil }
        let vault = ForeignVersion.opening(read.bytes, key: parameters.key, cachedKey: parameters.cachedKey, budget: parameters.budget)
        if !vault.isRefusal && parameters.keepsPending(read.fingerprint.inode) {
            try? parameters.pendingVersions?.add(read.bytes)
        }
        return (read.fingerprint, vault)
    }
}

private extension Result {
    var isRefusal: Bool {
        if case .failure = self { return true }
        return false
    }
}
