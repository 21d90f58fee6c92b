internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// Reads the decrypted payload as it arrives in pieces: for KDBX 4 first the inner header, then the
/// XML document, which goes straight to the SAX parser. Neither the decompressed payload nor the XML
/// is ever held whole.
final class PayloadDocumentReader {
    private enum Stage {
        /// KDBX 4: bytes of the inner header collected so far.
        case innerHeader(Data)
        case document(VaultDocumentReader)
    }

    private var stage: Stage

    /// A reader for a KDBX 4 payload (inner header, then XML).
    static func kdbx4() -> PayloadDocumentReader {
        PayloadDocumentReader(stage: .innerHeader(Data()))
    }

    /// A reader for a KDBX 3.1 payload (XML only, protected values under `innerStream`).
    static func kdbx3(innerStream: StreamCipher?) throws(KDBXError) -> PayloadDocumentReader {
        PayloadDocumentReader(stage: .document(try VaultDocumentReader(innerStream: innerStream, binaries: [])))
    }

    private init(stage: Stage) {
        self.stage = stage
    }

    /// Takes the next piece of the payload.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(KDBXError) {
        switch stage {
        case .document(let reader):
            try reader.feed(bytes)
        case .innerHeader(var collected):
            collected.append(contentsOf: bytes)
            guard let end = try InnerHeader.length(of: collected) else {
                stage = .innerHeader(collected)
                return
            }
            let (inner, xmlStart) = try InnerHeader.parse(collected.prefix(end))
            let stream = try PayloadCrypto.innerStream(inner.streamAlgorithm, key: inner.streamKey)
            let reader = try VaultDocumentReader(innerStream: stream, binaries: inner.binaries)
            stage = .document(reader)
            try reader.feed(collected[(collected.startIndex + xmlStart)...])
        }
    }

    /// Ends the payload and returns the document.
    func finish() throws(KDBXError) -> DecodedDocument {
        guard case .document(let reader) = stage else { throw .truncated("inner header") }
        return try reader.finish()
    }
}
