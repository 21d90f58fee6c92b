internal import Foundation
public import MyPassCore

/// How a vault is stored: container version, payload cipher, KDF and compression. Opening a vault
/// yields its settings; saving with them again keeps the file as it was (with fresh seeds and IVs).
public struct FormatSettings: Sendable, Equatable {
    /// The container version.
    public var version: KDBXVersion
    /// The payload cipher.
    public var cipher: PayloadCipher
    /// The key derivation and its parameters.
    public var kdf: KDFParameters
    /// The payload compression.
    public var compression: PayloadCompression
    /// KDBX 4 plugin data from the outer header, kept.
    public var publicCustomData: VariantDictionary?

    /// Settings with these values.
    public init(
        version: KDBXVersion, cipher: PayloadCipher, kdf: KDFParameters, compression: PayloadCompression = .gzip,
        publicCustomData: VariantDictionary? = nil
    ) {
        self.version = version
        self.cipher = cipher
        self.kdf = kdf
        self.compression = compression
        self.publicCustomData = publicCustomData
    }

    /// The settings a header describes.
    public init(_ header: OuterHeader) {
        self.init(version: header.version, cipher: header.cipher, kdf: header.kdf, compression: header.compression,
                  publicCustomData: header.publicCustomData)
    }
}

/// A vault read from a file, with what is needed to save it again the same way.
public struct OpenedVault: Sendable {
    /// The content.
    public let vault: Vault
    /// The format the file had.
    public let settings: FormatSettings
    /// The KDF result, reusable for saves with the same KDF settings.
    public let derivedKey: DerivedKey

    /// An opened vault with its format and key.
    public init(vault: Vault, settings: FormatSettings, derivedKey: DerivedKey) {
        self.vault = vault
        self.settings = settings
        self.derivedKey = derivedKey
    }
}
