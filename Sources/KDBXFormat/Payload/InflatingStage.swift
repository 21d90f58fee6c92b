internal import Foundation

/// The first of a read's three threads: decrypts and decompresses the payload and hands the document
/// on in pieces, which the parsing thread's libxml2 pulls as it reads (`StrictXMLParser`'s pulling
/// mode: a pushed parser looked ahead for the end of each markup, a tenth of libxml2's time).
final class InflatingStage: Sendable {
    /// At most this many decompressed pieces wait for the parser (half a MiB): the thread then
    /// decompresses several pieces each time it is woken.
    private static let waitingPieces = 8
    /// The size of a piece: libxml2 reads a few KiB at a time; pieces of 64 KiB are a few hundred
    /// hand-overs for a 10,000-entry document and little memory in flight.
    static let pieceSize = 1 << 16
    private let pieces = ChunkChannel<[UInt8]>(capacity: InflatingStage.waitingPieces)

    /// Starts decompressing `source` on a thread of its own, never beyond `limit` bytes.
    init(_ source: PayloadSource, compression: PayloadCompression, limit: Int) {
        let handOver = PayloadHandOver(source)
        let pieces = self.pieces
        let thread = Thread {
            var failure: KDBXError?
            // The payload (the file's bytes and keys) is let go before the end is announced: nothing
            // of the read outlives it.
            if let payload = handOver.take() {
                do throws(KDBXError) {
                    try payload.decompressed(compression, pieceSize: InflatingStage.pieceSize, limit: limit) { piece throws(KDBXError) in
                        guard pieces.put([UInt8](piece)) else { throw .corrupt("the document reader stopped") }
                    }
                } catch {
                    failure = error
                }
            }
            pieces.close(with: failure)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The next piece of the document; nil at its end, or when decompression failed (`finish` throws then).
    func next() -> [UInt8]? { pieces.take() }

    /// Waits until the thread has finished; its error, if decompression failed.
    func finish() throws(KDBXError) {
        if let error = pieces.waitForProducerError() { throw error }
    }

    /// Stops the thread early (the parse failed) and waits until it has finished.
    func stop() { pieces.cancel() }
}
