/* libsodium: ChaCha20, Salsa20, SHA-2, HMAC-SHA-256, random bytes, memzero, mlock. */
#include <sodium.h>
