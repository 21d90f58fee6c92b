/* ykpers (libykpers-1): a YubiKey's HMAC-SHA1 challenge-response slot over USB. */
#include <stdint.h>
#include <string.h>
#include <ykcore.h>
#include <ykdef.h>

/* Opens the first YubiKey, or the one with `serial` (0: any) among the first 16; NULL when none. */
static inline YK_KEY *mypass_yubikey_open(unsigned int serial) {
    for (int index = 0; index < 16; index++) {
        YK_KEY *key = yk_open_key(index);
        if (key == NULL) return NULL;
        unsigned int found = 0;
        if (serial == 0 || (yk_get_serial(key, 0, 0, &found) && found == serial)) return key;
        yk_close_key(key);
    }
    return NULL;
}

/* HMAC-SHA1 of `challenge` (at most 64 bytes) by slot 1 or 2; writes 20 bytes; 1 on success. The
   challenge goes out padded to 64 bytes as KeePassXC sends it (PKCS#7: a key configured for
   shorter challenges strips the trailing run of the last byte). */
static inline int mypass_yubikey_challenge(YK_KEY *key, int slot, const unsigned char *challenge, unsigned int length,
                                           unsigned char *response20) {
    unsigned char padded[64];
    unsigned char response[64];
    if (length > 64) return 0;
    memcpy(padded, challenge, length);
    memset(padded + length, (int)(64 - length), 64 - length);
    int ok = yk_challenge_response(key, slot == 2 ? SLOT_CHAL_HMAC2 : SLOT_CHAL_HMAC1, 1, 64, padded, sizeof response, response);
    if (ok) memcpy(response20, response, 20);
    memset(response, 0, sizeof response);
    return ok;
}
