import KDBXFormat
import SyncCommit
import SyncState
import SyncWatch

/// `decision` about `version` carried out on the vault at `path` by one check of a watch engine given
/// it (what `resolve` without a working copy does); its events go to `emit`.
func decideOnce(
    _ decision: SyncSession.Decision, at path: String, about version: String? = nil, credentials: VaultCredentials, state: SyncStateStore,
    settings: WatchEngine.Settings = WatchEngine.Settings(device: DeviceSettings()), emit: @escaping @Sendable (WatchEvent) -> Void = { _ in }
) -> WatcherDecision.Answer {
    WatchEngine(vaults: [path], credentials: credentials, limits: .standard, state: state, settings: settings, source: nil, onEvent: emit)
        .decideOnce(decision, about: version)
}
