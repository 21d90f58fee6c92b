internal import Synchronization
public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The file system the sync layer's calls reach: a value handed down from where a job starts (the
/// state store, the vault's context) and carried by every directory and file opened through it, so
/// that a test gives one job a file system that fails where it plans while the rest of the process
/// works on the real one. `real` is the only one a release build has; `faultInjecting()` makes the
/// fake (debug builds, which the tests run; a release build has no way to plan a fault).
public struct FileSystem: Sendable {
    /// The planned faults of this file system; nil: the real one.
    let faults: FaultPlan?
    /// The gate every file replacement through this file system passes (a shutdown closes it).
    public let shutdownGate: ShutdownGate

    init(faults: FaultPlan?, shutdownGate: ShutdownGate) {
        self.faults = faults
        self.shutdownGate = shutdownGate
    }

    /// The file system as it is.
    public static let real = FileSystem(faults: nil, shutdownGate: ShutdownGate())

    #if MYPASS_TEST_HOOKS
    /// A file system that is the real one until faults are planned (`plan`); each planned fault
    /// counts the calls made through this value only. Debug builds only (the tests').
    static func faultInjecting() -> FileSystem { FileSystem(faults: FaultPlan(), shutdownGate: ShutdownGate()) }

    /// Replaces the planned faults (and restarts the call counts); nothing for the real file system.
    func plan(_ planned: [SystemCalls.Fault]) { faults?.set(planned) }

    /// Runs `hook` once, just before the next compare-and-swap save through this file system swaps
    /// the file at `path` in (as the save names it): where a test makes another writer land.
    func beforeNextSwap(of path: String, _ hook: @escaping @Sendable () -> Void) { faults?.setSwapHook(hook, for: path) }
    #endif

    /// The process's file system for a `mypass-sync` child of a test: the faults planned in
    /// `MYPASS_SYNC_FAULTS` (comma-separated, e.g. `write:2:ENOSPC`) in a debug build; the real one
    /// otherwise (the release build `scripts/install` ships reads nothing).
    public static func fromEnvironment() -> FileSystem {
        #if MYPASS_TEST_HOOKS
        guard let text = ProcessInfo.processInfo.environment["MYPASS_SYNC_FAULTS"], !text.isEmpty else { return .real }
        let planned = faultInjecting()
        planned.plan(text.split(separator: ",").compactMap { SystemCalls.Fault(parsing: String($0)) })
        return planned
        #else
        return .real
        #endif
    }

    /// Runs the hook planned for the swap of `path`, if any (once).
    func beforeSwap(of path: String) { faults?.takeSwapHook(for: path)?() }

    /// The planned fault for the next call of `operation` on `path`, if any.
    func fault(for operation: SystemCalls.Operation, path: String?) -> SystemCalls.Fault? {
        faults?.next(operation, path: path)
    }
}

/// Planned faults, their call counts, the paths of the descriptors opened through it (which the
/// faults match) and the hooks planned before a swap. Debug builds only (`MYPASS_TEST_HOOKS`): in a release build it plans nothing,
/// remembers nothing and takes no lock.
final class FaultPlan: Sendable {
    #if MYPASS_TEST_HOOKS
    private struct State {
        var faults: [SystemCalls.Fault] = []
        /// Calls seen per fault (each fault counts the calls that match it).
        var counts: [Int: Int] = [:]
        var paths: [Int32: String] = [:]
        var swapHooks: [String: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    func set(_ faults: [SystemCalls.Fault]) {
        state.withLock { state in
            state.faults = faults
            state.counts = [:]
        }
    }

    func next(_ operation: SystemCalls.Operation, path: String?) -> SystemCalls.Fault? {
        state.withLock { state in
            guard !state.faults.isEmpty else { return nil }
            var hit: SystemCalls.Fault?
            for (index, fault) in state.faults.enumerated() where fault.operation == operation {
                if let filter = fault.pathContains, !(path?.contains(filter) ?? false) { continue }
                let count = (state.counts[index] ?? 0) + 1
                state.counts[index] = count
                if count == fault.occurrence && hit == nil { hit = fault }
            }
            return hit
        }
    }

    func remember(_ descriptor: Int32, path: String?) {
        state.withLock { $0.paths[descriptor] = path }
    }

    func forget(_ descriptor: Int32) {
        state.withLock { $0.paths[descriptor] = nil }
    }

    func path(of descriptor: Int32) -> String? {
        state.withLock { $0.paths[descriptor] }
    }

    func setSwapHook(_ hook: @escaping @Sendable () -> Void, for path: String) {
        state.withLock { $0.swapHooks[path] = hook }
    }

    func takeSwapHook(for path: String) -> (@Sendable () -> Void)? {
        state.withLock { $0.swapHooks.removeValue(forKey: path) }
    }
    #else
    func set(_ faults: [SystemCalls.Fault]) {}
    func next(_ operation: SystemCalls.Operation, path: String?) -> SystemCalls.Fault? { nil }
    func remember(_ descriptor: Int32, path: String?) {}
    func forget(_ descriptor: Int32) {}
    func path(of descriptor: Int32) -> String? { nil }
    func setSwapHook(_ hook: @escaping @Sendable () -> Void, for path: String) {}
    func takeSwapHook(for path: String) -> (@Sendable () -> Void)? { nil }
    #endif
}
