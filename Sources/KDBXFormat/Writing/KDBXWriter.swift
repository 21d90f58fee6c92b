public import Foundation
public import MyPassCore
internal import MyPassCrypto

/// Serialises vaults into KDBX files: fresh master seed, IVs and inner stream key on every save,
/// the KDF settings (and salt) kept so that the derived key can be reused.
public enum KDBXWriter {
    /// The bytes of `vault` stored with `settings`. Reuses `cachedKey` when it was derived with the
    /// same KDF settings; returns the file and the derived key used.
    ///
    /// The container version is raised to 4.1 when the content uses what only 4.1 can store
    /// (PreviousParentGroup, group tags, custom-data and custom-icon times).
    public static func serialize(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey? = nil,
        limits: ResourceLimits = .standard
    ) throws(KDBXError) -> (file: Data, derivedKey: DerivedKey) {
        let encoded = try encode(vault, settings: settings, key: key, cachedKey: cachedKey, limits: limits)
        return (encoded.file, encoded.derivedKey)
    }

    /// `serialize`, with the SHA-256 of the payload the file carries (the compressed inner header and
    /// XML document): `KDBXReader.payloadDigest` of the file must give it back, which proves that the
    /// bytes decrypt to exactly that payload, and that it inflates intact, to the document written
    /// from `vault`.
    public static func encode(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey? = nil,
        limits: ResourceLimits = .standard
    ) throws(KDBXError) -> EncodedVault {
        try encode(vault, settings: settings, key: key, cachedKey: cachedKey, limits: limits,
                   as: requiredVersion(for: vault, requested: settings.version))
    }

    /// `serialize` with the container version given as is (tests write a KDBX 2.x file with it).
    static func serialize(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits,
        as version: KDBXVersion
    ) throws(KDBXError) -> (file: Data, derivedKey: DerivedKey) {
        let encoded = try encode(vault, settings: settings, key: key, cachedKey: cachedKey, limits: limits, as: version)
        return (encoded.file, encoded.derivedKey)
    }

    private static func encode(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits,
        as version: KDBXVersion
    ) throws(KDBXError) -> EncodedVault {
        guard version.isKDBX4 || settings.kdf.name == "aes-kdf" else {
            throw .unwritable("KDBX 3.1 supports only AES-KDF (this vault uses \(settings.kdf.name))")
        }
        let derived = try DerivedKey.reusing(cachedKey, compositeKey: key, kdf: settings.kdf, limits: limits, version: version)
        let masterSeed = try random(32)
        var header = OuterHeader(
            version: version, cipher: settings.cipher, compression: settings.compression, masterSeed: masterSeed,
            encryptionIV: try random(settings.cipher.ivSize), kdf: settings.kdf,
            publicCustomData: version.isKDBX4 ? settings.publicCustomData : nil)
        let binaryOrder = usedBinaries(of: vault)
        let (file, digest) = version.isKDBX4
            ? try writeKDBX4(vault, header: header, key: derived, binaryOrder: binaryOrder)
            : try writeKDBX3(vault, header: &header, key: derived, binaryOrder: binaryOrder)
        return EncodedVault(file: file, derivedKey: derived, payloadDigest: digest)
    }

    /// The decrypted XML document of `vault` (KeePass's XML export: secrets in plain text).
    public static func plainXML(_ vault: Vault) throws(KDBXError) -> Data {
        var document = Data()
        try writePlainXML(vault) { document.append(contentsOf: $0) }
        return document
    }

    /// The same document handed to `sink` in pieces as it is written (never held whole).
    public static func writePlainXML(_ vault: Vault, to sink: @escaping (UnsafeRawBufferPointer) -> Void) throws(KDBXError) {
        var writer = VaultDocumentWriter(
            vault: vault, version: .v4_1, innerStream: nil, headerHash: nil,
            binaryOrder: usedBinaries(of: vault), compressMetaBinaries: false)
        writer.plainExport = true
        try writer.write { bytes throws(KDBXError) in sink(bytes) }
    }

    /// `requested`, raised to 4.1 when the vault holds data only KDBX 4.1 can store, and to 3.1 when
    /// it is a version this project reads but does not write (KDBX 2.x).
    public static func requiredVersion(for vault: Vault, requested: KDBXVersion) -> KDBXVersion {
        let requested = requested.isWritten ? requested : .v3_1
        guard requested < .v4_1, !VersionFit.gaps(in: vault, settings: nil, writtenAs: .v4_0).isEmpty else { return requested }
        return .v4_1
    }

    /// Attachment contents referenced by the vault, in a stable order.
    private static func usedBinaries(of vault: Vault) -> [BinaryID] {
        let used = vault.root.referencedBinaries()
        return vault.binaries.sortedIDs.filter { used.contains($0) }
    }

    private static func random(_ count: Int) throws(KDBXError) -> Data {
        do { return try RandomBytes.data(count: count) } catch { throw .crypto(error) }
    }

    private static func writeKDBX4(
        _ vault: Vault, header: OuterHeader, key: DerivedKey, binaryOrder: [BinaryID]
    ) throws(KDBXError) -> (file: Data, payloadDigest: Data) {
        let headerBytes = try header.serialized()
        let streamKey = try random(64)
        let stream = try PayloadCrypto.innerStream(.chaCha20, key: streamKey)
        var binaries: [PooledBinary] = []
        for id in binaryOrder {
            guard let binary = vault.binaries[id] else { throw .unwritable("attachment content \(id) is missing") }
            binaries.append(binary)
        }
        let inner = InnerHeader(streamAlgorithm: .chaCha20, streamKey: streamKey, binaries: binaries)
        let compressor = try PipelinedCompressor(header.compression)
        inner.serialized().withUnsafeBytes { compressor.append($0) }
        try VaultDocumentWriter(
            vault: vault, version: header.version, innerStream: stream, headerHash: nil,
            binaryOrder: binaryOrder, compressMetaBinaries: false).write { bytes in compressor.append(bytes) }
        // The payload comes in segments of one HMAC block each: every segment is encrypted in place
        // and copied once, into a file buffer of its final size, then let go.
        var (segments, digest) = try compressor.finish()
        let payloadLength = segments.reduce(0) { $0 + $1.count }
        let hmacBase = key.hmacBaseKey(masterSeed: header.masterSeed)
        let encryptedLength = PayloadCrypto.encryptedLength(of: payloadLength, cipher: header.cipher)
        var file = Data(capacity: headerBytes.count + 64 + HMACBlockStream.framedLength(of: encryptedLength))
        file.append(headerBytes)
        file.append(SHA256.hash(headerBytes))
        file.append(HMACSHA256.authenticationCode(
            for: headerBytes, key: HMACBlockStream.blockKey(index: .max, baseKey: hmacBase)))
        let encryptor = try PayloadCrypto.SegmentEncryptor(
            cipher: header.cipher, key: try key.cipherKey(masterSeed: header.masterSeed), iv: header.encryptionIV)
        var blocks = HMACBlockStream.BlockWriter(baseKey: hmacBase)
        for position in segments.indices {
            var segment = segments[position]
            segments[position] = Data()
            try encryptor.encrypt(inPlace: &segment, isLast: position == segments.count - 1)
            blocks.append(segment, to: &file)
        }
        blocks.finish(&file)
        return (file, digest)
    }

    private static func writeKDBX3(
        _ vault: Vault, header: inout OuterHeader, key: DerivedKey, binaryOrder: [BinaryID]
    ) throws(KDBXError) -> (file: Data, payloadDigest: Data) {
        let streamKey = try random(32)
        let startBytes = try random(32)
        header.protectedStreamKey = streamKey
        header.streamStartBytes = startBytes
        header.innerStream = .salsa20
        let headerBytes = try header.serialized()
        let stream = try PayloadCrypto.innerStream(.salsa20, key: streamKey)
        let compressor = try PipelinedCompressor(header.compression)
        try VaultDocumentWriter(
            vault: vault, version: header.version, innerStream: stream,
            headerHash: header.version >= .v3_1 ? SHA256.hash(headerBytes) : nil,
            binaryOrder: binaryOrder, compressMetaBinaries: header.compression == .gzip
        ).write { bytes in compressor.append(bytes) }
        let (segments, digest) = try compressor.finish()
        var compressed = Data(capacity: segments.reduce(0) { $0 + $1.count })
        for segment in segments { compressed.append(segment) }
        var plaintext = startBytes
        plaintext.append(HashedBlockStream.write(compressed))
        try PayloadCrypto.encrypt(
            inPlace: &plaintext, cipher: header.cipher, key: try key.cipherKey(masterSeed: header.masterSeed), iv: header.encryptionIV)
        var file = Data(capacity: headerBytes.count + plaintext.count)
        file.append(headerBytes)
        file.append(plaintext)
        return (file, digest)
    }
}
