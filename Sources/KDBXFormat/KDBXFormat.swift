/// KDBXFormat turns bytes into vault snapshots and back: the outer header, KDF parameters, the
/// composite key and key files, the KDBX 3.1 hashed and KDBX 4 HMAC block streams, gzip, the inner
/// header and random stream, and the XML document. It takes `Data` and returns `Data`: no file system.
public enum KDBXFormat {
    /// The container versions this layer is written for.
    public static let supportedVersions = ["3.1", "4.0", "4.1"]
}
