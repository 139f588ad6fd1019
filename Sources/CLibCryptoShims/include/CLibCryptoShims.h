#ifndef TOKENMINT_CLIBCRYPTOSHIMS_H
#define TOKENMINT_CLIBCRYPTOSHIMS_H
/* Glue over OpenSSL 3.0 calls that would cost a Swift round trip per step,
   and the nonce source that hands RFC 6979's k to OpenSSL's ECDSA set-up (a
   private library context with a generator of ours that serves one armed
   value and nothing else). No primitive is implemented here: every hash,
   MAC and group operation is libcrypto's. */
#include <stddef.h>
#include <stdint.h>
#include <openssl/types.h>

/* RFC 6979 §3.2 deterministic ECDSA: k from an HMAC_DRBG keyed with the
   private scalar and bits2octets(digest), then ECDSA_do_sign_ex with that k.
   `hmac_template` is an unkeyed HMAC context with the DRBG's digest set (it
   is duplicated, not changed, so threads may share it); `hlen` is that
   digest's size. Writes r and s, each `scalar_len` bytes big-endian.
   `flags`: TOKENMINT_RFC6979_CURVE_SETUP lets a P-256 key take k·G and k⁻¹
   from OpenSSL's own ECDSA set-up fed this k (see nonce_source.c); without
   it, and whenever that fails, the shim makes them itself (k⁻¹ by
   `BN_mod_inverse` in constant time). TOKENMINT_RFC6979_REKEY keys every
   DRBG step afresh, as libcrypto 3.0.0–3.0.2 needs (for tests elsewhere).
   The signature is the same either way. Returns 1 on success, 0 when
   libcrypto failed, -1 when no usable nonce came out of 64 rounds (a P-256
   round is rejected with probability about 2^-32). Every buffer of the
   shim's that held the scalar, k or a DRBG value is cleansed (libcrypto's
   own temporaries are as cleansed as in its own signing). */
enum { TOKENMINT_RFC6979_CURVE_SETUP = 1, TOKENMINT_RFC6979_REKEY = 2 };
int tokenmint_ecdsa_sign_rfc6979(EC_KEY *key, const EVP_MAC_CTX *hmac_template, size_t hlen,
                                 const uint8_t *digest, size_t digest_len,
                                 uint8_t *r, uint8_t *s, size_t scalar_len, int flags);

/* 1 when the calling thread's last signature above took k·G and k⁻¹ from
   OpenSSL's set-up, 0 when the shim made them. */
int tokenmint_ecdsa_rfc6979_took_curve_setup(void);

/* 1 while P-256 signing can take its set-up from OpenSSL; 0 if the nonce
   source could not be built, or was stopped because libcrypto drew k in a
   way it does not serve. */
int tokenmint_ecdsa_rfc6979_curve_setup_live(void);

/* 1 when libcrypto restarts an HMAC context from its key on `EVP_MAC_init`
   without one (3.0.3 and later); 0 on 3.0.0–3.0.2, where that call changes
   nothing. Tested once per process. */
int tokenmint_hmac_restarts(void);
#endif
