/* libgcrypt: AES-256 (CBC, ECB) and Twofish-CBC for MyPassCrypto. */
#include <gcrypt.h>

/* gcry_control is variadic and so not callable from Swift; these wrap the calls MyPassCrypto makes. */

/* Secure memory is managed by MyPassCrypto's SecureBytes, not by libgcrypt's pool. */
static inline gcry_error_t mypass_gcry_disable_secure_memory(void) {
    return gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
}

/* Marks library initialisation as complete (required before any other call). */
static inline gcry_error_t mypass_gcry_finish_initialization(void) {
    return gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
}

/* Whether another component already initialised the library. */
static inline int mypass_gcry_is_initialized(void) {
    return gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P) != 0;
}
