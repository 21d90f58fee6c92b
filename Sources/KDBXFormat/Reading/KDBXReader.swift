public import Foundation

/// Opens KDBX files: bytes in, header (and, with credentials, the vault) out.
public enum KDBXReader {
    /// The outer header of `file`, without credentials (for `info` and format detection).
    public static func header(of file: Data) throws(KDBXError) -> OuterHeader {
        try OuterHeader.parse(file).header
    }
}
