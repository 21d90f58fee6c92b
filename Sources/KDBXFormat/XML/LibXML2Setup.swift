internal import CLibXML2

/// libxml2's global state, set up once before any thread uses the library: libxml2 2.9 asks for
/// `xmlInitParser` before multithreaded use, and a save writes its document on two threads while
/// an open parses on another.
enum LibXML2Setup {
    private static let done: Bool = {
        xmlInitParser()
        return true
    }()

    /// Sets libxml2 up (once; later calls return at once).
    static func ensure() {
        _ = done
    }
}
