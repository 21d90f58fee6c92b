public import Foundation

/// Attachments as KeePass edits them: the bytes go to the vault's pool once (the same file attached
/// twice is stored once), the entry refers to them by name, and the version before the edit goes
/// to the entry's history (which keeps referring to the old bytes).
extension Vault {
    /// A vault where entry `uuid` has the attachment `name` holding `data`. An attachment of that
    /// name is replaced only when `replacing`, else refused.
    public func attaching(_ data: Data, named name: String, to uuid: UUID, replacing: Bool = false, at time: Timestamp = .now()) throws -> Vault {
        guard !name.isEmpty else { throw VaultEditError.invalidName("an attachment needs a name") }
        guard let (entry, _) = root.entry(uuid) else { throw VaultEditError.entryNotFound(uuid) }
        if entry.attachments.contains(where: { $0.name == name }) && !replacing {
            throw VaultEditError.invalidName("the entry has an attachment \(name) already (replace it with --force)")
        }
        var result = self
        let binary = result.binaries.add(data, isProtected: false)
        return try result.updatingEntry(uuid, at: time) { entry in
            if let index = entry.attachments.firstIndex(where: { $0.name == name }) {
                entry.attachments[index].binary = binary
            } else {
                entry.attachments.append(Attachment(name: name, binary: binary))
            }
        }
    }

    /// A vault where entry `uuid` no longer has the attachment `name` (its history keeps it).
    public func removingAttachment(named name: String, from uuid: UUID, at time: Timestamp = .now()) throws -> Vault {
        guard let (entry, _) = root.entry(uuid) else { throw VaultEditError.entryNotFound(uuid) }
        guard entry.attachments.contains(where: { $0.name == name }) else {
            throw VaultEditError.invalidName("the entry has no attachment \(name)")
        }
        return try updatingEntry(uuid, at: time) { $0.attachments.removeAll { $0.name == name } }
    }

    /// The bytes of `entry`'s attachment `name`, if it has one.
    public func attachmentData(named name: String, of entry: Entry) -> Data? {
        entry.attachments.first { $0.name == name }.flatMap { binaries[$0.binary]?.data }
    }
}
