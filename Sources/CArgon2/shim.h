/* libargon2: Argon2d / Argon2id key derivation (the library KeePassXC links). */
#include <argon2.h>
