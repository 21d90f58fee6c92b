public import Foundation
public import MyPassCore
internal import MyPassCrypto

/// Opens KDBX files: bytes in, header (and, with credentials, the vault) out. No file system.
public enum KDBXReader {
    /// The outer header of `file`, without credentials (for `info` and format detection).
    public static func header(of file: Data) throws(KDBXError) -> OuterHeader {
        try OuterHeader.parse(file).header
    }

    /// Decrypts and parses `file`. Derives the key with the file's KDF unless `cachedKey` was derived
    /// with exactly the same KDF settings (same salt), in which case no derivation runs.
    /// `sharingStorageWith`: another version of this vault already in memory (the vault a copy is
    /// merged into); the entry versions the file holds unchanged then take its storage instead of
    /// new memory. The vault read is the same either way.
    public static func open(
        _ file: Data, key: CompositeKey, cachedKey: DerivedKey? = nil, limits: ResourceLimits = .standard,
        sharingStorageWith donor: Vault? = nil
    ) throws(KDBXError) -> OpenedVault {
        try open(file, key: key, cachedKey: cachedKey, limits: limits, donor: donor.map(EntryStorageDonor.init))
    }

    private static func open(
        _ file: Data, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits, donor: EntryStorageDonor?
    ) throws(KDBXError) -> OpenedVault {
        try open(file, limits: limits, donor: donor) { header throws(KDBXError) in
            try header.kdf.check(against: limits)
            return try DerivedKey.reusing(cachedKey, compositeKey: key, kdf: header.kdf, limits: limits, version: header.version)
        }
    }

    /// Opens `file` with a derived key alone (quick unlock, no password): the header's KDF must be the
    /// one the key was derived with, else `wrongCredentials` (the caller asks for the password).
    public static func open(_ file: Data, derivedKey: DerivedKey, limits: ResourceLimits = .standard) throws(KDBXError) -> OpenedVault {
        try open(file, limits: limits) { header throws(KDBXError) in
            guard header.kdf.fingerprint == derivedKey.kdf.fingerprint else { throw .wrongCredentials }
            return derivedKey
        }
    }

    private static func open(
        _ file: Data, limits: ResourceLimits, donor: EntryStorageDonor? = nil, key resolveKey: (OuterHeader) throws(KDBXError) -> DerivedKey
    ) throws(KDBXError) -> OpenedVault {
        let file = zeroBased(file)
        let (header, headerLength) = try checkedHeader(of: file)
        let derived = try resolveKey(header)
        let payload = try decryptedPayload(file, header: header, headerLength: headerLength, key: derived, limits: limits)
        let layout: PipelinedPayloadReader.Layout
        if header.version.isKDBX4 {
            layout = .kdbx4
        } else {
            guard let streamKey = header.protectedStreamKey, let streamAlgorithm = header.innerStream else {
                throw .corrupt("KDBX 3.1 header without stream fields")
            }
            layout = .kdbx3(innerStream: try PayloadCrypto.innerStream(streamAlgorithm, key: streamKey))
        }
        let document = try PipelinedPayloadReader.read(payload, compression: header.compression, layout: layout,
                                                       limit: limits.maximumPayloadBytes, donor: donor)
        if !header.version.isKDBX4, let storedHash = document.headerHash, !storedHash.isEmpty {
            guard storedHash == SHA256.hash(file.prefix(headerLength)) else {
                throw .corrupt("header hash in Meta does not match the header")
            }
        }
        return OpenedVault(vault: document.vault, settings: FormatSettings(header), derivedKey: derived)
    }

    /// SHA-256 of the payload `file` carries, decrypted with `derivedKey` (every block's HMAC or
    /// hash checked), still compressed; a gzip payload is also inflated to its end, which checks its
    /// CRC-32 and length against what it inflates to. Equal to the `payloadDigest` of
    /// `KDBXWriter.encode` exactly when the file holds the payload written then, which a save checks
    /// on the bytes read back from the disk instead of parsing them again.
    public static func payloadDigest(of file: Data, derivedKey: DerivedKey, limits: ResourceLimits = .standard) throws(KDBXError) -> Data {
        let file = zeroBased(file)
        let (header, headerLength) = try checkedHeader(of: file)
        guard header.kdf.fingerprint == derivedKey.kdf.fingerprint else { throw .wrongCredentials }
        let payload = try decryptedPayload(file, header: header, headerLength: headerLength, key: derivedKey, limits: limits)
        var hasher = SHA2Hasher(.sha256)
        // Decrypted and hashed here, inflated to its end beside it.
        let check = header.compression == .gzip ? InflateCheck(limit: limits.maximumPayloadBytes) : nil
        do throws(KDBXError) {
            try payload.produce { piece throws(KDBXError) in
                hasher.update(piece)
                check?.feed(piece)
            }
        } catch {
            try? check?.finish()
            throw error
        }
        try check?.finish()
        return hasher.finalize()
    }

    /// The outer header and its length; for KDBX 4 its own hash is checked (before any KDF runs).
    /// The layers below index a file from zero; a slice of a larger buffer is copied once.
    private static func zeroBased(_ file: Data) -> Data {
        file.startIndex == 0 ? file : Data(file)
    }

    private static func checkedHeader(of file: Data) throws(KDBXError) -> (OuterHeader, Int) {
        let (header, headerLength) = try OuterHeader.parse(file)
        if header.version.isKDBX4 {
            let hashEnd = headerLength + 32
            guard file.count >= hashEnd + 32 else { throw .truncated("header hash and HMAC") }
            guard SHA256.hash(file.prefix(headerLength)) == file.subdata(in: headerLength..<hashEnd) else {
                throw .corrupt("header hash mismatch")
            }
        }
        return (header, headerLength)
    }

    /// Opens several files at once, one per core (decryption, decompression and parsing of each file
    /// are independent); results in the order of `files`.
    public static func open(
        files: [Data], key: CompositeKey, cachedKey: DerivedKey? = nil, limits: ResourceLimits = .standard
    ) -> [Result<OpenedVault, KDBXError>] {
        open(files: files.map { ($0, key) }, cachedKey: cachedKey, limits: limits)
    }

    /// Opens several files at once, each with its own credentials; `cachedKey` serves every file whose
    /// KDF settings and credentials it was derived from (derive it first with `deriveKey(for:key:limits:)`
    /// so that files sharing a KDF salt do not each run the KDF). `sharingStorageWith` as for one file.
    public static func open(
        files: [(file: Data, key: CompositeKey)], cachedKey: DerivedKey? = nil, limits: ResourceLimits = .standard,
        sharingStorageWith donor: Vault? = nil
    ) -> [Result<OpenedVault, KDBXError>] {
        let results = ParallelSlots<Result<OpenedVault, KDBXError>>(count: files.count)
        let donor = donor.map(EntryStorageDonor.init)
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            results.set(Result { () throws(KDBXError) in
                try open(files[index].file, key: files[index].key, cachedKey: cachedKey, limits: limits, donor: donor)
            }, at: index)
        }
        return files.indices.map { results.take($0) ?? .failure(.corrupt("not opened")) }
    }

    /// Runs the KDF of `file` with `key` (after the header checks and the resource caps), for use as
    /// the cached key of later opens. Whether the key is right is known only when a file is opened.
    public static func deriveKey(
        for file: Data, key: CompositeKey, limits: ResourceLimits = .standard
    ) throws(KDBXError) -> DerivedKey {
        let header = try OuterHeader.parse(file).header
        try header.kdf.check(against: limits)
        return try DerivedKey.reusing(nil, compositeKey: key, kdf: header.kdf, limits: limits, version: header.version)
    }

    /// Reads a decrypted XML document (KeePass's XML export, or `plainXML`) into a vault.
    public static func vault(fromPlainXML xml: Data) throws(KDBXError) -> Vault {
        // The same two-thread path as a file's payload (so the fuzzer of this entry point covers it).
        try PipelinedPayloadReader.read(xml, compression: .none, layout: .kdbx3(innerStream: nil),
                                        limit: ResourceLimits.standard.maximumPayloadBytes).vault
    }

    /// The payload after the outer layers, still compressed if the header says so: KDBX 4 as a block
    /// stream checked and decrypted as it is read (the header HMAC, which proves the key, checked
    /// here); KDBX 3.1 decrypted, its padding and hashed blocks checked.
    private static func decryptedPayload(
        _ file: Data, header: OuterHeader, headerLength: Int, key: DerivedKey, limits: ResourceLimits
    ) throws(KDBXError) -> PayloadSource {
        guard header.version.isKDBX4 else {
            return .whole(try decryptedKDBX3Payload(file, header: header, headerLength: headerLength, key: key, limits: limits))
        }
        let hmacBase = key.hmacBaseKey(masterSeed: header.masterSeed)
        let storedHMAC = file.subdata(in: (headerLength + 32)..<(headerLength + 64))
        let headerKey = HMACBlockStream.blockKey(index: .max, baseKey: hmacBase)
        guard HMACSHA256.isValid(storedHMAC, for: file.prefix(headerLength), key: headerKey) else {
            throw .wrongCredentials
        }
        return .kdbx4Blocks(KDBX4PayloadStream(
            blocks: file[(file.startIndex + headerLength + 64)...], hmacBaseKey: hmacBase, cipher: header.cipher,
            cipherKey: try key.cipherKey(masterSeed: header.masterSeed), iv: header.encryptionIV, limit: limits.maximumPayloadBytes))
    }

    private static func decryptedKDBX3Payload(
        _ file: Data, header: OuterHeader, headerLength: Int, key: DerivedKey, limits: ResourceLimits
    ) throws(KDBXError) -> Data {
        guard let streamStartBytes = header.streamStartBytes, header.protectedStreamKey != nil, header.innerStream != nil else {
            throw .corrupt("KDBX 3.1 header without stream fields")
        }
        var plaintext = file.subdata(in: headerLength..<file.endIndex)
        try PayloadCrypto.decryptInPlaceKeepingPadding(
            &plaintext, cipher: header.cipher, key: try key.cipherKey(masterSeed: header.masterSeed), iv: header.encryptionIV)
        // The first 32 plaintext bytes must repeat the header's stream start bytes: a mismatch means
        // the key is wrong (corruption of just those bytes is the much rarer case).
        guard plaintext.count >= 32, ConstantTime.isEqual(plaintext.prefix(32), streamStartBytes) else {
            throw .wrongCredentials
        }
        try PayloadCrypto.removePadding(&plaintext, cipher: header.cipher)
        // Padding is read from the last byte, which in a cut file can lie inside the start bytes.
        guard plaintext.count >= 32 else { throw .truncated("KDBX 3.1 payload") }
        return try HashedBlockStream.read(plaintext.subdata(in: (plaintext.startIndex + 32)..<plaintext.endIndex),
                                          limit: limits.maximumPayloadBytes)
    }
}
