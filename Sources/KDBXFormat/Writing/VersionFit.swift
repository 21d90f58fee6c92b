public import MyPassCore

/// What a vault holds that an older KDBX version cannot store, and the vault without exactly that.
/// A save never drops anything on its own (`KDBXWriter.requiredVersion` raises the version instead);
/// a user who asks for an older version gets it only by dropping what it cannot hold, knowingly.
public enum VersionFit {
    /// One kind of content that an older version cannot store, and how many places hold it.
    public struct Gap: Sendable, Equatable, CustomStringConvertible {
        /// The kinds, named after their KeePass XML elements.
        public enum Kind: String, Sendable, CaseIterable {
            /// `PreviousParentGroup` of groups and entries (KDBX 4.1).
            case previousParentGroup
            /// `Tags` of groups (KDBX 4.1).
            case groupTags
            /// `QualityCheck` of entries (KDBX 4.1).
            case qualityCheck
            /// `LastModificationTime` of custom-data items (KDBX 4.1).
            case customDataTimes
            /// `Name` and `LastModificationTime` of custom icons (KDBX 4.1).
            case customIconNamesAndTimes
            /// Plugin data in the outer header (`PublicCustomData`, KDBX 4.0).
            case publicCustomData

            /// The first version that stores it.
            public var neededVersion: KDBXVersion { self == .publicCustomData ? .v4_0 : .v4_1 }

            var label: String {
                switch self {
                case .previousParentGroup: "PreviousParentGroup (the group before the last move)"
                case .groupTags: "group tags"
                case .qualityCheck: "QualityCheck (password quality excluded)"
                case .customDataTimes: "custom-data modification times"
                case .customIconNamesAndTimes: "custom icon names and times"
                case .publicCustomData: "public custom data in the header"
                }
            }
        }

        /// What cannot be stored.
        public let kind: Kind
        /// How many groups, entries (history included), items or icons hold it.
        public let count: Int

        /// What cannot be stored, how often, and the version that can.
        public var description: String { "\(kind.label): \(count) (needs KDBX \(kind.neededVersion))" }
    }

    /// What `vault` (with `settings`, when given) holds that `version` cannot store; empty when it fits.
    public static func gaps(in vault: Vault, settings: FormatSettings?, writtenAs version: KDBXVersion) -> [Gap] {
        var counts: [Gap.Kind: Int] = [:]
        func count(_ kind: Gap.Kind, _ amount: Int = 1) {
            if version < kind.neededVersion && amount > 0 { counts[kind, default: 0] += amount }
        }
        count(.customDataTimes, vault.meta.customData.filter { $0.lastModified != nil }.count)
        count(.customIconNamesAndTimes, vault.meta.customIcons.filter { $0.name != nil || $0.lastModified != nil }.count)
        if let header = settings?.publicCustomData, !header.items.isEmpty { count(.publicCustomData) }
        func timed(_ items: [CustomDataItem]) -> Int {
            items.reduce(0) { $0 + ($1.lastModified == nil ? 0 : 1) }
        }
        // Every save asks this of the whole vault: nothing is allocated per version.
        func countVersion(_ version: Entry) {
            if version.previousParentGroup != nil { count(.previousParentGroup) }
            if version.qualityCheck != nil { count(.qualityCheck) }
            count(.customDataTimes, timed(version.customData))
        }
        vault.root.forEachGroup { group, _ in
            if group.previousParentGroup != nil { count(.previousParentGroup) }
            if !group.tags.isEmpty { count(.groupTags) }
            count(.customDataTimes, timed(group.customData))
            for entry in group.entries {
                countVersion(entry)
                for item in entry.history { countVersion(item) }
            }
        }
        return Gap.Kind.allCases.compactMap { kind in counts[kind].map { Gap(kind: kind, count: $0) } }
    }

    /// How many attachment contents are flagged protected, a flag `version` does not keep
    /// (`KDBXVersion.keepsAttachmentProtection`). Not a gap: nothing the user stored is lost.
    public static func unkeptAttachmentProtection(in vault: Vault, writtenAs version: KDBXVersion) -> Int {
        guard !version.keepsAttachmentProtection else { return 0 }
        let used = vault.root.referencedBinaries()
        return vault.binaries.binaries.filter { used.contains($0.key) && $0.value.isProtected }.count
    }

    /// `vault` as a `version` file reads back: without its attachments' protection flags where the
    /// version keeps none.
    public static func asStored(_ vault: Vault, writtenAs version: KDBXVersion) -> Vault {
        guard !version.keepsAttachmentProtection else { return vault }
        var vault = vault
        vault.binaries.clearProtectionFlags()
        return vault
    }

    /// `vault` and `settings` without what `version` cannot store (nothing else changes).
    public static func dropping(
        unsupportedBy version: KDBXVersion, from vault: Vault, settings: FormatSettings
    ) -> (vault: Vault, settings: FormatSettings) {
        guard version < .v4_1 else { return (vault, settings) }
        var vault = vault
        var settings = settings
        if version < .v4_0 { settings.publicCustomData = nil }
        vault.meta.customData = vault.meta.customData.map(withoutTime)
        vault.meta.customIcons = vault.meta.customIcons.map { icon in
            var icon = icon
            icon.name = nil
            icon.lastModified = nil
            return icon
        }
        vault.root = dropping(from: vault.root)
        return (vault, settings)
    }

    private static func dropping(from group: Group) -> Group {
        var group = group
        group.previousParentGroup = nil
        group.tags = []
        group.customData = group.customData.map(withoutTime)
        group.entries = group.entries.map { entry in
            var entry = dropping(from: entry)
            entry.history = entry.history.map(dropping(from:))
            return entry
        }
        group.groups = group.groups.map(dropping(from:))
        return group
    }

    private static func dropping(from entry: Entry) -> Entry {
        var entry = entry
        entry.previousParentGroup = nil
        entry.qualityCheck = nil
        entry.customData = entry.customData.map(withoutTime)
        return entry
    }

    private static func withoutTime(_ item: CustomDataItem) -> CustomDataItem {
        var item = item
        item.lastModified = nil
        return item
    }
}
