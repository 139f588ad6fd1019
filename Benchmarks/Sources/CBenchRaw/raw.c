#include "CBenchRaw.h"

#include <openssl/crypto.h>
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
