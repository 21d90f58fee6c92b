internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// The entries of a vault cut, in document order, into pieces of about `versionsPerPiece` versions,
/// each within one group: a save writes every other piece on a second thread (`FragmentWriter`)
/// while it writes the rest, and puts the helper's pieces in their places. Writing the document was
/// the slower side of a save once the deflate took a tenth of it (ISA-L), and the second core idle.
///
/// Protected values are masked with the inner random stream in document order, so each piece
/// carries where in that stream it starts (`streamOffset`, counted from the first entry) and how
/// many bytes of it its protected values take: a piece's stream is put at its own start.
struct DocumentPieces: Sendable {
    struct Piece: Sendable {
        /// Whether the helper writes it: every other piece of at least a quarter of the usual size
        /// (a group's last few entries, or a small group's, stay with the writer: handing them over
        /// would cost more than writing them).
        let isHelpers: Bool
        /// Its entries, consecutive entries of one group.
        let entries: ArraySlice<Entry>
        /// How many versions they hold (entries and history items).
        let versions: Int
        /// The inner-stream bytes all pieces before it take.
        let streamOffset: UInt64
        /// The inner-stream bytes its protected values take (their UTF-8 lengths).
        let streamBytes: UInt64

        /// The inner-stream position after its last protected value.
        var streamEnd: UInt64 { streamOffset + streamBytes }
    }

    /// About this many versions (entries and history items) make a piece: a few hundred KB of XML,
    /// of which the helper holds at most three at a time.
    static let versionsPerPiece = 512

    /// The pieces of each group, groups numbered in the order the document writes them.
    let groups: [[Piece]]
    /// The helper's pieces, in document order.
    let helpers: [Piece]

    /// The pieces of `root`'s tree, of about `versionsPerPiece` versions; nil when fewer than two can
    /// be shared (nothing for the helper).
    init?(root: Group, versionsPerPiece: Int = DocumentPieces.versionsPerPiece) {
        var groups: [[Piece]] = []
        var shared = 0
        var offset: UInt64 = 0
        func visit(_ group: Group) {
            let ordinal = groups.count
            groups.append([])
            var start = group.entries.startIndex, versions = 0, bytes: UInt64 = 0
            for position in group.entries.indices {
                let entry = group.entries[position]
                versions += 1 + entry.history.count
                bytes += Self.streamBytes(of: entry)
                for item in entry.history { bytes += Self.streamBytes(of: item) }
                guard versions >= versionsPerPiece || position == group.entries.endIndex - 1 else { continue }
                let sharable = versions >= versionsPerPiece / 4
                groups[ordinal].append(Piece(isHelpers: sharable && shared % 2 == 1, entries: group.entries[start...position],
                                             versions: versions, streamOffset: offset, streamBytes: bytes))
                if sharable { shared += 1 }
                offset += bytes
                start = position + 1
                versions = 0
                bytes = 0
            }
            for child in group.groups { visit(child) }
        }
        visit(root)
        guard shared >= 2 else { return nil }
        self.groups = groups
        helpers = groups.flatMap { $0.filter(\.isHelpers) }
    }

    /// The inner-stream bytes `version`'s protected values take when written (not its history).
    private static func streamBytes(of version: Entry) -> UInt64 {
        var bytes: UInt64 = 0
        for field in version.fields {
            if case .protected(let value) = field.value { bytes += UInt64(value.utf8Count) }
        }
        return bytes
    }
}

/// Writes the helper's pieces on a thread of its own, each into a buffer handed over in order.
final class FragmentWriter: Sendable {
    private let fragments = ChunkChannel<[UInt8]>(capacity: 2)

    /// Starts writing `pieces` with `writer`, whose inner stream (`stream`, its own) starts at
    /// `streamStart` for the first entry of the document.
    init(_ pieces: [DocumentPieces.Piece], writer: VaultDocumentWriter, stream: StreamCipher?, streamStart: UInt64,
         references: [BinaryID: Int]) {
        let fragments = self.fragments
        let work = Work(writer: writer, stream: stream)
        let thread = Thread {
            let writer = work.writer
            var failure: KDBXError?
            do throws(KDBXError) {
                for piece in pieces {
                    if let stream = work.stream {
                        do throws(CryptoError) { try stream.reposition(to: streamStart + piece.streamOffset) } catch { throw .crypto(error) }
                    }
                    var bytes: [UInt8] = []
                    // About what a version takes in the benchmark vault; an array grows from there.
                    bytes.reserveCapacity(min(piece.versions * 1_200, 4 << 20))
                    let xml = try XMLStreamWriter(fragmentTo: { bytes.append(contentsOf: $0) })
                    for entry in piece.entries { try writer.writeEntry(entry, xml, references, isHistoryItem: false) }
                    try xml.finish()
                    // The plan and the writer agree on what the piece's protected values take.
                    if let stream = work.stream, stream.position != streamStart + piece.streamEnd {
                        throw .unwritable("XML writer: the inner stream is out of step")
                    }
                    guard fragments.put(bytes) else { break }
                }
            } catch {
                failure = error
            }
            fragments.close(with: failure)
        }
        // The stack of a main thread: preserved elements are written by recursion, as deep as a reader allows.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// What the thread takes over: the writer and its stream, used on that thread only.
    /// Unchecked: `StreamCipher` is not `Sendable`; this one is given up by the thread that made it.
    private struct Work: @unchecked Sendable {
        let writer: VaultDocumentWriter
        let stream: StreamCipher?
    }

    /// The next piece's bytes; throws the helper's error when it failed.
    func next() throws(KDBXError) -> [UInt8] {
        if let fragment = fragments.take() { return fragment }
        throw fragments.waitForProducerError() ?? .unwritable("XML writer: a piece of the document is missing")
    }

    /// Waits until the thread has finished (after the last piece, or stopping it early).
    func stop() {
        fragments.cancel()
    }
}
