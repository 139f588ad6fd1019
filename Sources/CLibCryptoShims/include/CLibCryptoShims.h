#ifndef TOKENMINT_CLIBCRYPTOSHIMS_H
#define TOKENMINT_CLIBCRYPTOSHIMS_H
/* Glue over OpenSSL 3.0 calls that would cost a Swift round trip per step.
   No primitive is implemented here: every hash, MAC and group operation is
   libcrypto's. */
#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>

/* RFC 6979 §3.2 deterministic ECDSA: k from an HMAC_DRBG keyed with the
   private scalar and bits2octets(digest), then ECDSA_do_sign_ex with that k.
   `hmac_template` is an unkeyed HMAC context with the DRBG's digest set (it
   is duplicated, not changed, so threads may share it); `hlen` is that
   digest's size. Writes r and s, each `scalar_len` bytes big-endian. With
   `curve_setup` set, a P-256 key takes k⁻¹ and r from OpenSSL's own ECDSA
   set-up fed this k (its constant-time inverse is not exported in 3.0);
   otherwise, and on any failure of that, k⁻¹ is `BN_mod_inverse` in
   constant time. The signature is the same either way. Returns 1 on
   success, 0 when libcrypto failed, -1 when no usable nonce came out of 64
   rounds (probability about 2^-128 a round). Every buffer of the shim's
   that held the scalar, k or a DRBG value is cleansed (libcrypto's own
   temporaries are as cleansed as in its own signing). */
int tokenmint_ecdsa_sign_rfc6979(EC_KEY *key, const EVP_MAC_CTX *hmac_template, size_t hlen,
                                 const uint8_t *digest, size_t digest_len,
                                 uint8_t *r, uint8_t *s, size_t scalar_len, int curve_setup);

/* 1 while P-256 signing can take its set-up from OpenSSL (above); 0 if the
   nonce source could not be built, or was stopped after libcrypto drew k in
   a way it did not expect. */
int tokenmint_ecdsa_rfc6979_curve_setup_live(void);

/* How many signatures in this process took their set-up from OpenSSL. */
unsigned long tokenmint_ecdsa_rfc6979_curve_setups(void);

/* 1 when libcrypto restarts an HMAC context from its key on `EVP_MAC_init`
   without one (3.0.3 and later); 0 on 3.0.0–3.0.2, where that call changes
   nothing. Tested once per process. */
int tokenmint_hmac_restarts(void);
#endif
