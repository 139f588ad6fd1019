#ifndef TOKENMINT_NONCE_SOURCE_H
#define TOKENMINT_NONCE_SOURCE_H
/* Internal to CLibCryptoShims: see nonce_source.c. */
#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>

/* The library context whose random generator serves only an armed nonce,
   or NULL when it could not be built or was refused. */
OSSL_LIB_CTX *tokenmint_nonce_context(void);
/* Stops using that context for the rest of the process (libcrypto drew k in
   a way this file did not expect). */
void tokenmint_nonce_refuse(void);
/* Arms `k` (big-endian, `len` bytes; not copied) for the calling thread's
   next draw from that context; the draw disarms it. */
void tokenmint_nonce_arm(const uint8_t *k, size_t len);
void tokenmint_nonce_disarm(void);
#endif
