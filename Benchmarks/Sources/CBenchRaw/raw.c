#include "CBenchRaw.h"

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <sodium.h>
#include <string.h>
#include <time.h>
#include <zint.h>

static EVP_MD *sha256_md;

int CBenchRaw_init(void) {
    sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    return sodium_init() >= 0 && sha256_md != NULL ? 0 : -1;
}

const char *CBenchRaw_sodium_version(void) { return sodium_version_string(); }
const char *CBenchRaw_openssl_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

void CBenchRaw_ed25519_seed_keypair(uint8_t pk[32], uint8_t sk[64], const uint8_t seed[32]) {
    crypto_sign_seed_keypair(pk, sk, seed);
}

int CBenchRaw_ed25519_sign(uint8_t sig[64], const uint8_t *m, size_t n, const uint8_t sk[64]) {
    return crypto_sign_detached(sig, NULL, m, n, sk);
}

int CBenchRaw_ed25519_verify(const uint8_t sig[64], const uint8_t *m, size_t n, const uint8_t pk[32]) {
    return crypto_sign_verify_detached(sig, m, n, pk);
}

void *CBenchRaw_private_key(const uint8_t *der, size_t len) {
    const unsigned char *p = der;
    return d2i_AutoPrivateKey(NULL, &p, (long)len);
}

void *CBenchRaw_public_key(const uint8_t *der, size_t len) {
    const unsigned char *p = der;
    return d2i_PUBKEY(NULL, &p, (long)len);
}

void CBenchRaw_free_key(void *key) { EVP_PKEY_free((EVP_PKEY *)key); }

static int configure(EVP_PKEY_CTX *pctx, int padding) {
    if (padding == 0) return 1;
    if (EVP_PKEY_CTX_set_rsa_padding(pctx, padding) != 1) return 0;
    if (padding == RSA_PKCS1_PSS_PADDING) {
        return EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1;
    }
    return 1;
}

int CBenchRaw_sign(void *key, const char *md, int padding, const uint8_t *m, size_t n, uint8_t *sig, size_t *siglen) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    int ok = ctx != NULL && EVP_DigestSignInit_ex(ctx, &pctx, md, NULL, NULL, (EVP_PKEY *)key, NULL) == 1 &&
             configure(pctx, padding) && EVP_DigestSign(ctx, sig, siglen, m, n) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

int CBenchRaw_ecdsa_sign_given_k(void *key, const char *md, const uint8_t *m, size_t n, const uint8_t *kbytes, size_t klen, uint8_t *sig, size_t siglen) {
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY((EVP_PKEY *)key);
    const EC_GROUP *group = ec ? EC_KEY_get0_group(ec) : NULL;
    const BIGNUM *order = group ? EC_GROUP_get0_order(group) : NULL;
    if (order == NULL) return -1;
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int dlen = 0;
    EVP_MD *hash = EVP_MD_fetch(NULL, md, NULL);
    int ok = hash != NULL && EVP_Digest(m, n, digest, &dlen, hash, NULL) == 1;
    EVP_MD_free(hash);
    BN_CTX *ctx = BN_CTX_secure_new();
    BIGNUM *k = BN_secure_new(), *x = BN_new(), *r = BN_new(), *kinv = NULL;
    EC_POINT *point = EC_POINT_new(group);
    ECDSA_SIG *s = NULL;
    ok = ok && ctx && k && x && r && point && BN_bin2bn(kbytes, (int)klen, k) != NULL;
    if (ok) BN_set_flags(k, BN_FLG_CONSTTIME);
    ok = ok && EC_POINT_mul(group, point, k, NULL, NULL, ctx) == 1 && EC_POINT_get_affine_coordinates(group, point, x, NULL, ctx) == 1 &&
         BN_nnmod(r, x, order, ctx) == 1 && (kinv = BN_mod_inverse(NULL, k, order, ctx)) != NULL &&
         (s = ECDSA_do_sign_ex(digest, (int)dlen, kinv, r, (EC_KEY *)ec)) != NULL;
    size_t half = siglen / 2;
    ok = ok && BN_bn2binpad(ECDSA_SIG_get0_r(s), sig, (int)half) == (int)half && BN_bn2binpad(ECDSA_SIG_get0_s(s), sig + half, (int)half) == (int)half;
    ECDSA_SIG_free(s);
    BN_clear_free(kinv);
    BN_clear_free(k);
    BN_free(x);
    BN_free(r);
    EC_POINT_free(point);
    BN_CTX_free(ctx);
    return ok ? 0 : -1;
}

int CBenchRaw_verify(void *key, const char *md, int padding, const uint8_t *sig, size_t siglen, const uint8_t *m, size_t n) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pctx = NULL;
    int ok = ctx != NULL && EVP_DigestVerifyInit_ex(ctx, &pctx, md, NULL, NULL, (EVP_PKEY *)key, NULL) == 1 &&
             configure(pctx, padding) && EVP_DigestVerify(ctx, sig, siglen, m, n) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

int CBenchRaw_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *m, size_t n, uint8_t out[32]) {
    unsigned int len = 0;
    return HMAC(sha256_md, key, (int)keylen, m, n, out, &len) != NULL ? 0 : -1;
}

uint64_t CBenchRaw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int CBenchRaw_zint_aztec(const uint8_t *data, size_t n, int level) {
    struct zint_symbol *symbol = ZBarcode_Create();
    if (symbol == NULL) return -1;
    symbol->symbology = BARCODE_AZTEC;
    symbol->input_mode = DATA_MODE;
    symbol->option_1 = level;
    int status = ZBarcode_Encode(symbol, data, (int)n);
    int side = status >= ZINT_ERROR ? -1 : symbol->rows;
    ZBarcode_Delete(symbol);
    return side;
}

int CBenchRaw_zint_aztec_png(const uint8_t *data, size_t n, int level, const char *path) {
    struct zint_symbol *symbol = ZBarcode_Create();
    if (symbol == NULL) return -1;
    symbol->symbology = BARCODE_AZTEC;
    symbol->input_mode = DATA_MODE;
    symbol->option_1 = level;
    symbol->scale = 2.0f;  /* zint's scale 2 = 4 pixels per module */
    strncpy(symbol->outfile, path, sizeof(symbol->outfile) - 1);
    int status = ZBarcode_Encode_and_Print(symbol, data, (int)n, 0);
    ZBarcode_Delete(symbol);
    return status >= ZINT_ERROR ? -1 : 0;
}

int CBenchRaw_base64url(const uint8_t *data, size_t n, char *out, size_t capacity) {
    if (capacity < sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING)) return -1;
    sodium_bin2base64(out, capacity, data, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return 0;
}
