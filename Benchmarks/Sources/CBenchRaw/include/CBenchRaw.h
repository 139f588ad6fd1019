#ifndef TOKENMINT_BENCH_RAW_H
#define TOKENMINT_BENCH_RAW_H
#include <stddef.h>
#include <stdint.h>

/* Raw baselines: each function is one call of the C primitive TokenMint wraps,
   on buffers prepared by the caller. Keys are opaque handles. */

int CBenchRaw_init(void);
const char *CBenchRaw_sodium_version(void);
const char *CBenchRaw_openssl_version(void);

/* libsodium Ed25519. sk is libsodium's 64-byte secret key. */
void CBenchRaw_ed25519_seed_keypair(uint8_t pk[32], uint8_t sk[64], const uint8_t seed[32]);
int CBenchRaw_ed25519_sign(uint8_t sig[64], const uint8_t *m, size_t n, const uint8_t sk[64]);
int CBenchRaw_ed25519_verify(const uint8_t sig[64], const uint8_t *m, size_t n, const uint8_t pk[32]);

/* OpenSSL EVP keys from DER (PKCS#8 private or SPKI public). */
void *CBenchRaw_private_key(const uint8_t *der, size_t len);
void *CBenchRaw_public_key(const uint8_t *der, size_t len);
void CBenchRaw_free_key(void *key);

/* EVP_DigestSign / EVP_DigestVerify with a new EVP_MD_CTX per call.
   padding: 0 none (EC, Ed25519), 1 PKCS#1 v1.5, 6 PSS (salt = digest length). */
/* Instruction counting under callgrind (callgrind.c): 1 when running on valgrind. */
int CBenchRaw_on_valgrind(void);
void CBenchRaw_count_begin(void);
void CBenchRaw_count_end(const char *label);
/* libsodium's random bytes from a fixed seed (the instruction gate only); before CBenchRaw_init. */
int CBenchRaw_deterministic_random(void);
int CBenchRaw_sign(void *key, const char *md, int padding, const uint8_t *m, size_t n, uint8_t *sig, size_t *siglen);
/* The least an ECDSA signer with a caller-chosen nonce (RFC 6979) pays on
   OpenSSL 3.0's public API, k given: the digest, k·G, its affine x, the
   constant-time inverse of k (BN_FLG_CONSTTIME: OpenSSL's own signer inverts
   with internal code it does not export), ECDSA_do_sign_ex, r‖s out. No
   DRBG: this is a floor, not a signer. */
int CBenchRaw_ecdsa_sign_given_k(void *key, const char *md, const uint8_t *m, size_t n, const uint8_t *k, size_t klen, uint8_t *sig, size_t siglen);
int CBenchRaw_verify(void *key, const char *md, int padding, const uint8_t *sig, size_t siglen, const uint8_t *m, size_t n);

/* One-shot HMAC() with SHA-256. */
int CBenchRaw_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *m, size_t n, uint8_t out[32]);

/* zint: one Aztec encode (create, encode, delete); returns the side or -1. */
int CBenchRaw_zint_aztec(const uint8_t *data, size_t n, int level);
/* zint: encode and write zint's own PNG file to `path`; returns 0 or -1. */
int CBenchRaw_zint_aztec_png(const uint8_t *data, size_t n, int level, const char *path);

/* Heap allocations (malloc, calloc, realloc, aligned) counted from start to
   stop, in every thread; available only on glibc. */
int CBenchRaw_alloc_available(void);
void CBenchRaw_alloc_start(void);
uint64_t CBenchRaw_alloc_stop(void);

/* `iterations` raw signatures on each of `threads` threads at once; returns
   the seconds taken, or -1. op 0: Ed25519 (secret = libsodium's 64-byte sk);
   1: EVP_DigestSign (key, md, padding as above); 2: HMAC-SHA-256 (secret = key). */
double CBenchRaw_parallel_sign(int op, void *key, const char *md, int padding, const uint8_t *m, size_t n,
                               const uint8_t *secret, size_t secret_len, size_t iterations, int threads);

/* libsodium's base64url (no padding) into `out`; 0 or -1. */
int CBenchRaw_base64url(const uint8_t *data, size_t n, char *out, size_t capacity);

/* JWE without JOSE: ECDH-ES on P-256 (a fresh ephemeral key, EVP_PKEY_derive,
   one SHA-256 as the Concat KDF) or RSA-OAEP-256 key transport of a random
   CEK, then AES-256-GCM (12-byte IV, 16-byte tag) over m with `info`/`aad`
   as the additional data. 0 or -1. */
int CBenchRaw_ecdh_es_encrypt(void *peer, const uint8_t *info, size_t infolen, const uint8_t *m, size_t n, uint8_t *out, uint8_t tag[16]);
int CBenchRaw_ecdh_es_decrypt(void *own, void *ephemeral, const uint8_t *info, size_t infolen, const uint8_t iv[12], const uint8_t *c, size_t n,
                              uint8_t tag[16], uint8_t *out);
int CBenchRaw_rsa_oaep_encrypt(void *peer, const uint8_t *aad, size_t aadlen, const uint8_t *m, size_t n, uint8_t *ek, size_t *eklen, uint8_t *out,
                               uint8_t tag[16]);
int CBenchRaw_rsa_oaep_decrypt(void *own, const uint8_t *ek, size_t eklen, const uint8_t *aad, size_t aadlen, const uint8_t iv[12], const uint8_t *c,
                               size_t n, uint8_t tag[16], uint8_t *out);

/* Monotonic nanoseconds. */
uint64_t CBenchRaw_now(void);

#endif
