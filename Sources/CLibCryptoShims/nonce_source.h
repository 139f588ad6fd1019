#ifndef TOKENMINT_NONCE_SOURCE_H
#define TOKENMINT_NONCE_SOURCE_H
/* Internal to CLibCryptoShims: see nonce_source.c. */
#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>

#define TOKENMINT_HIDDEN __attribute__((visibility("hidden")))

/* The library context whose random generator serves only an armed nonce,
   or NULL when it could not be built or was refused. */
TOKENMINT_HIDDEN OSSL_LIB_CTX *tokenmint_nonce_context(void);
/* Stops using that context for the rest of the process (libcrypto drew k in
   a way this file did not expect). */
TOKENMINT_HIDDEN void tokenmint_nonce_refuse(void);
/* Arms `k` (big-endian, `len` bytes; not copied) for the calling thread's
   next draw from that context; the draw disarms it. */
TOKENMINT_HIDDEN void tokenmint_nonce_arm(const uint8_t *k, size_t len);
/* Disarms; 1 when a draw since arming was refused (nothing armed, or
   shorter than k): libcrypto drew in a way the source does not serve. */
TOKENMINT_HIDDEN int tokenmint_nonce_disarm(void);
#endif
