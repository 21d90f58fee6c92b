internal import Foundation
internal import CLibsecret
public import MyPassCrypto

/// The desktop keyring's items of this tool through libsecret (the Secret Service API that GNOME
/// Keyring, KWallet and KeePassXC implement): store, search, clear by attributes. Only
/// `DesktopKeyring` uses it.
enum SecretService {
    /// One stored item: its label, its attributes, its secret when loaded.
    struct Item {
        let label: String
        let attributes: [String: String]
        let secret: SecureBytes?
    }

    /// The keyring could not be used: no session bus, no Secret Service, a locked collection whose
    /// unlock was refused. libsecret's message, which holds no secret.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The attribute names of the schema (`shim.h`).
    static let attributeNames = ["application", "database-root", "database-created", "database-name", "path", "key-file"]

    static func store(_ secret: SecureBytes, label: String, attributes: [String: String]) throws(Unavailable) {
        var message: UnsafeMutablePointer<CChar>?
        // libsecret takes a C string: the copy lives only for the call and is wiped after it.
        var text = [UInt8](secret.unprotectedData()) + [0]
        defer { MemoryMask.wipe(&text) }
        let stored = withAttributes(attributes) { keys, values, count in
            text.withUnsafeBufferPointer { password in
                password.baseAddress!.withMemoryRebound(to: CChar.self, capacity: text.count) {
                    mypass_secret_store(keys, values, count, label, $0, &message)
                }
            }
        }
        if let error = take(message) { throw Unavailable(description: error) }
        guard stored == 1 else { throw Unavailable(description: "the keyring did not store the item") }
    }

    /// The items whose attributes include `attributes`; with their secrets when `loadingSecrets`.
    static func search(_ attributes: [String: String], loadingSecrets: Bool) throws(Unavailable) -> [Item] {
        var message: UnsafeMutablePointer<CChar>?
        let list = withAttributes(attributes) { keys, values, count in
            mypass_secret_search(keys, values, count, loadingSecrets ? 1 : 0, &message)
        }
        defer { if let list { mypass_secret_free_items(list) } }
        if let error = take(message) { throw Unavailable(description: error) }
        guard let list else { return [] }
        var items: [Item] = []
        for index in 0..<mypass_secret_count(list) {
            guard let item = mypass_secret_item(list, Int32(index)) else { continue }
            let label = take(mypass_secret_label(item)) ?? ""
            var found: [String: String] = [:]
            for name in attributeNames { found[name] = take(mypass_secret_attribute(item, name)) }
            var secret: SecureBytes?
            if loadingSecrets {
                var buffer = [UInt8](repeating: 0, count: 4096)
                defer { MemoryMask.wipe(&buffer) }
                var error: UnsafeMutablePointer<CChar>?
                let length = mypass_secret_copy(item, &buffer, buffer.count, &error)
                if let failure = take(error) { throw Unavailable(description: failure) }
                if length >= 0 { secret = SecureBytes(buffer[0..<length]) }
            }
            items.append(Item(label: label, attributes: found, secret: secret))
        }
        return items
    }

    /// Removes the items whose attributes include `attributes`; whether any was removed.
    static func clear(_ attributes: [String: String]) throws(Unavailable) -> Bool {
        var message: UnsafeMutablePointer<CChar>?
        let removed = withAttributes(attributes) { keys, values, count in mypass_secret_clear(keys, values, count, &message) }
        if let error = take(message) { throw Unavailable(description: error) }
        return removed == 1
    }

    /// `body` with the attributes as two arrays of C strings.
    private static func withAttributes<T>(
        _ attributes: [String: String],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>, Int32) -> T
    ) -> T {
        let pairs = attributes.sorted { $0.key < $1.key }
        let keys = pairs.map { UnsafePointer(strdup($0.key)) }
        let values = pairs.map { UnsafePointer(strdup($0.value)) }
        defer { (keys + values).forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return keys.withUnsafeBufferPointer { keyPointers in
            values.withUnsafeBufferPointer { valuePointers in
                body(keyPointers.baseAddress ?? UnsafePointer(bitPattern: 8)!, valuePointers.baseAddress ?? UnsafePointer(bitPattern: 8)!,
                     Int32(pairs.count))
            }
        }
    }

    /// The text of a GLib-allocated string, freed.
    private static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { g_free(pointer) }
        return String(cString: pointer)
    }
}
