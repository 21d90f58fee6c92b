public import Foundation
internal import MyPassCore

/// The unencrypted header at the start of every KDBX file.
public struct OuterHeader: Sendable, Equatable {
    /// First signature: KeePass 2.x family.
    static let signature1: UInt32 = 0x9AA2_D903
    /// Second signature: KDBX (0xB54BFB65 would be KeePass 1.x's .kdb, 0xB54BFB66 a 2.x pre-release).
    static let signature2: UInt32 = 0xB54B_FB67

    /// The container version.
    public var version: KDBXVersion
    /// The payload cipher.
    public var cipher: PayloadCipher
    /// The payload compression.
    public var compression: PayloadCompression
    /// 32 random bytes mixed into the final keys; fresh on every save.
    public var masterSeed: Data
    /// The payload cipher's IV or nonce; fresh on every save.
    public var encryptionIV: Data
    /// The key derivation and its parameters.
    public var kdf: KDFParameters
    /// KDBX 3.1: key of the inner random stream (in KDBX 4 it lives in the inner header).
    public var protectedStreamKey: Data?
    /// KDBX 3.1: the first 32 plaintext bytes, which tell a wrong key from corruption.
    public var streamStartBytes: Data?
    /// KDBX 3.1: the inner random stream algorithm.
    public var innerStream: InnerStreamAlgorithm?
    /// KDBX 4: plugin data stored unencrypted in the header.
    public var publicCustomData: VariantDictionary?
    /// The optional comment field, kept as read.
    public var comment: Data?
    /// Fields this reader does not know, kept so they survive a save.
    public var unknownFields: [UnknownField] = []

    /// A header field with an identifier this reader does not interpret.
    public struct UnknownField: Sendable, Equatable {
        /// The field's type byte.
        public var identifier: UInt8
        /// The field's bytes.
        public var data: Data
    }

    /// Field identifiers.
    enum FieldID: UInt8 {
        case endOfHeader = 0, comment, cipherID, compressionFlags, masterSeed, transformSeed,
             transformRounds, encryptionIV, protectedStreamKey, streamStartBytes, innerRandomStreamID,
             kdfParameters, publicCustomData
    }

    /// A header with these values.
    public init(
        version: KDBXVersion, cipher: PayloadCipher, compression: PayloadCompression, masterSeed: Data,
        encryptionIV: Data, kdf: KDFParameters, protectedStreamKey: Data? = nil, streamStartBytes: Data? = nil,
        innerStream: InnerStreamAlgorithm? = nil, publicCustomData: VariantDictionary? = nil
    ) {
        self.version = version
        self.cipher = cipher
        self.compression = compression
        self.masterSeed = masterSeed
        self.encryptionIV = encryptionIV
        self.kdf = kdf
        self.protectedStreamKey = protectedStreamKey
        self.streamStartBytes = streamStartBytes
        self.innerStream = innerStream
        self.publicCustomData = publicCustomData
    }

    /// Reads the signatures and version only (cheap, for `info` and format detection).
    static func readVersion(_ reader: inout ByteReader) throws(KDBXError) -> KDBXVersion {
        guard reader.remainingCount >= 12 else {
            throw reader.remainingCount >= 8 ? .truncated("version field") : .notKDBX
        }
        let first = try reader.readUInt32()
        let second = try reader.readUInt32()
        guard first == signature1 else { throw .notKDBX }
        switch second {
        case signature2: break
        case 0xB54B_FB65: throw .unsupportedVersion("1.x (KeePass 1 .kdb)")
        case 0xB54B_FB66: throw .unsupportedVersion("2.x pre-release")
        default: throw .notKDBX
        }
        let minor = try reader.readUInt16()
        let major = try reader.readUInt16()
        let version = KDBXVersion(major: major, minor: minor)
        // KDBX 2.x (KeePass 2.0x) is the 3.x container without what 3.0/3.1 added: read like 3.x.
        guard (2...4).contains(major) else { throw .unsupportedVersion(version.description) }
        return version
    }

    /// Parses the header at the start of `file`; returns it and the number of header bytes
    /// (everything up to and including the end-of-header field).
    public static func parse(_ file: Data) throws(KDBXError) -> (header: OuterHeader, length: Int) {
        var reader = ByteReader(file, context: "outer header")
        let version = try readVersion(&reader)
        var fields: [UInt8: Data] = [:]
        var unknown: [UnknownField] = []
        while true {
            let identifier = try reader.readUInt8()
            let length = version.isKDBX4 ? Int(try reader.readInt32()) : Int(try reader.readUInt16())
            let data = try reader.readBytes(length)
            if identifier == FieldID.endOfHeader.rawValue { break }
            guard let field = FieldID(rawValue: identifier) else {
                unknown.append(UnknownField(identifier: identifier, data: data))
                continue
            }
            guard fields[identifier] == nil else { throw .corrupt("header field \(field) appears twice") }
            let allowed: Bool = switch field {
            case .transformSeed, .transformRounds, .protectedStreamKey, .streamStartBytes, .innerRandomStreamID:
                !version.isKDBX4
            case .kdfParameters, .publicCustomData:
                version.isKDBX4
            default: true
            }
            if allowed { fields[identifier] = data } else {
                unknown.append(UnknownField(identifier: identifier, data: data))
            }
        }
        var header = try OuterHeader(version: version, fields: fields)
        header.unknownFields = unknown
        return (header, reader.consumedCount)
    }

    private init(version: KDBXVersion, fields: [UInt8: Data]) throws(KDBXError) {
        func required(_ id: FieldID) throws(KDBXError) -> Data {
            guard let data = fields[id.rawValue] else { throw .corrupt("header field \(id) is missing") }
            return data
        }
        func uint32(_ data: Data, _ id: FieldID) throws(KDBXError) -> UInt32 {
            guard data.count == 4 else { throw .corrupt("header field \(id) has length \(data.count)") }
            var reader = ByteReader(data, context: "\(id)")
            return try reader.readUInt32()
        }
        self.version = version
        guard let cipherUUID = UUID(bytes: try required(.cipherID)) else { throw .corrupt("cipher ID is not 16 bytes") }
        cipher = try PayloadCipher(uuid: cipherUUID)
        let compressionValue = try uint32(try required(.compressionFlags), .compressionFlags)
        guard let compression = PayloadCompression(rawValue: compressionValue) else {
            throw .unsupported("compression \(compressionValue)")
        }
        self.compression = compression
        masterSeed = try required(.masterSeed)
        guard masterSeed.count == 32 else { throw .corrupt("master seed is \(masterSeed.count) bytes, expected 32") }
        encryptionIV = try required(.encryptionIV)
        guard encryptionIV.count == cipher.ivSize else {
            throw .corrupt("encryption IV is \(encryptionIV.count) bytes, expected \(cipher.ivSize)")
        }
        comment = fields[FieldID.comment.rawValue]
        if version.isKDBX4 {
            kdf = try KDFParameters(dictionary: VariantDictionary(parsing: try required(.kdfParameters)))
            publicCustomData = try fields[FieldID.publicCustomData.rawValue].map { data throws(KDBXError) in
                try VariantDictionary(parsing: data)
            }
        } else {
            let seed = try required(.transformSeed)
            let roundsData = try required(.transformRounds)
            guard roundsData.count == 8 else { throw .corrupt("transform rounds field has length \(roundsData.count)") }
            var roundsReader = ByteReader(roundsData, context: "transform rounds")
            kdf = .aesKDF(seed: seed, rounds: try roundsReader.readUInt64())
            protectedStreamKey = try required(.protectedStreamKey)
            streamStartBytes = try required(.streamStartBytes)
            guard streamStartBytes?.count == 32 else { throw .corrupt("stream start bytes are not 32 bytes") }
            let streamID = try uint32(try required(.innerRandomStreamID), .innerRandomStreamID)
            guard let stream = InnerStreamAlgorithm(rawValue: streamID) else {
                throw .unsupported("inner random stream \(streamID)")
            }
            innerStream = stream
        }
    }

    /// The serialised header, ending with the end-of-header field.
    public func serialized() throws(KDBXError) -> Data {
        var writer = ByteWriter()
        writer.write(Self.signature1)
        writer.write(Self.signature2)
        writer.write(version.minor)
        writer.write(version.major)
        func field(_ id: UInt8, _ data: Data) {
            writer.write(id)
            if version.isKDBX4 { writer.write(Int32(data.count)) } else { writer.write(UInt16(data.count)) }
            writer.write(data)
        }
        func uint32Data(_ value: UInt32) -> Data {
            var bytes = ByteWriter()
            bytes.write(value)
            return bytes.data
        }
        if let comment { field(FieldID.comment.rawValue, comment) }
        field(FieldID.cipherID.rawValue, cipher.uuid.data)
        field(FieldID.compressionFlags.rawValue, uint32Data(compression.rawValue))
        field(FieldID.masterSeed.rawValue, masterSeed)
        if version.isKDBX4 {
            field(FieldID.encryptionIV.rawValue, encryptionIV)
            field(FieldID.kdfParameters.rawValue, kdf.dictionary.serialized())
            if let publicCustomData { field(FieldID.publicCustomData.rawValue, publicCustomData.serialized()) }
        } else {
            guard case .aesKDF(let seed, let rounds) = kdf else {
                throw .unwritable("KDBX 3.1 supports only AES-KDF")
            }
            guard let protectedStreamKey, let streamStartBytes, let innerStream else {
                throw .unwritable("KDBX 3.1 header needs the inner stream key and stream start bytes")
            }
            field(FieldID.transformSeed.rawValue, seed)
            field(FieldID.transformRounds.rawValue, rounds.littleEndianBytes)
            field(FieldID.encryptionIV.rawValue, encryptionIV)
            field(FieldID.protectedStreamKey.rawValue, protectedStreamKey)
            field(FieldID.streamStartBytes.rawValue, streamStartBytes)
            field(FieldID.innerRandomStreamID.rawValue, uint32Data(innerStream.rawValue))
        }
        for unknownField in unknownFields { field(unknownField.identifier, unknownField.data) }
        field(FieldID.endOfHeader.rawValue, Data([0x0D, 0x0A, 0x0D, 0x0A]))
        return writer.data
    }
}
