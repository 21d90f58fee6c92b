internal import CGcrypt
internal import CSodium

/// One-time initialisation of libsodium and libgcrypt.
///
/// Every entry point of MyPassCrypto calls `CryptoLibraries.ensureInitialized()` first; Swift runs
/// the global initialiser exactly once, thread-safely.
enum CryptoLibraries {
    /// Minimum libgcrypt version this code was written against (Debian 12 ships 1.10.1).
    private static let minimumGcryptVersion = "1.8.0"

    private static let initialization: Result<Void, CryptoError> = {
        if sodium_init() < 0 {
            return .failure(.libraryFailure(
                library: "libsodium", function: "sodium_init", code: -1, message: "initialisation failed"))
        }
        if mypass_gcry_is_initialized() == 0 {
            guard gcry_check_version(minimumGcryptVersion) != nil else {
                return .failure(.libraryFailure(
                    library: "libgcrypt", function: "gcry_check_version", code: -1,
                    message: "libgcrypt \(minimumGcryptVersion) or newer is required"))
            }
            _ = mypass_gcry_disable_secure_memory()
            _ = mypass_gcry_finish_initialization()
        }
        return .success(())
    }()

    /// Initialises both libraries on first use; throws if either cannot be used.
    static func ensureInitialized() throws(CryptoError) {
        try initialization.get()
    }
}
