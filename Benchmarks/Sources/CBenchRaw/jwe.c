#include "CBenchRaw.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <string.h>

/* The raw OpenSSL calls behind one JWE, with no JOSE around them: key
   agreement or key transport, then AES-256-GCM over the plaintext. */

static int gcm(int enc, const uint8_t key[32], const uint8_t iv[12], const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t n,
               uint8_t *out, uint8_t tag[16]) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len = 0, ok = ctx != NULL && EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, iv, enc) == 1 &&
                      EVP_CipherUpdate(ctx, NULL, &len, aad, (int)aadlen) == 1 && EVP_CipherUpdate(ctx, out, &len, in, (int)n) == 1;
    if (ok && !enc) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1;
    ok = ok && EVP_CipherFinal_ex(ctx, out + len, &len) == 1;
    if (ok && enc) ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

/* Z from ECDH, then one SHA-256 over 00000001 || Z || otherinfo (Concat KDF for 256 bits). */
static int agree(EVP_PKEY *own, EVP_PKEY *peer, const uint8_t *info, size_t infolen, uint8_t key[32]) {
    uint8_t z[66];
    size_t zlen = sizeof z;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    int ok = ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer_ex(ctx, peer, 1) == 1 &&
             EVP_PKEY_derive(ctx, z, &zlen) == 1;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) return -1;
    static const uint8_t counter[4] = {0, 0, 0, 1};
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int outlen = 0;
    ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(md, counter, 4) == 1 &&
         EVP_DigestUpdate(md, z, zlen) == 1 && EVP_DigestUpdate(md, info, infolen) == 1 && EVP_DigestFinal_ex(md, key, &outlen) == 1;
    EVP_MD_CTX_free(md);
    OPENSSL_cleanse(z, sizeof z);
    return ok ? 0 : -1;
}

int CBenchRaw_ecdh_es_encrypt(void *peer, const uint8_t *info, size_t infolen, const uint8_t *m, size_t n, uint8_t *out, uint8_t tag[16]) {
    EVP_PKEY *ephemeral = EVP_EC_gen("P-256");
    if (ephemeral == NULL) return -1;
    uint8_t key[32], iv[12];
    int ok = agree(ephemeral, (EVP_PKEY *)peer, info, infolen, key) == 0 && RAND_bytes(iv, 12) == 1 &&
             gcm(1, key, iv, info, infolen, m, n, out, tag) == 0;
    EVP_PKEY_free(ephemeral);
    OPENSSL_cleanse(key, sizeof key);
    return ok ? 0 : -1;
}

int CBenchRaw_ecdh_es_decrypt(void *own, void *ephemeral, const uint8_t *info, size_t infolen, const uint8_t iv[12], const uint8_t *c, size_t n,
                              uint8_t tag[16], uint8_t *out) {
    uint8_t key[32];
    int ok = agree((EVP_PKEY *)own, (EVP_PKEY *)ephemeral, info, infolen, key) == 0 && gcm(0, key, iv, info, infolen, c, n, out, tag) == 0;
    OPENSSL_cleanse(key, sizeof key);
    return ok ? 0 : -1;
}

static int oaep(EVP_PKEY *key, int enc, const uint8_t *in, size_t n, uint8_t *out, size_t *outlen) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int ok = ctx != NULL && (enc ? EVP_PKEY_encrypt_init(ctx) : EVP_PKEY_decrypt_init(ctx)) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1 &&
             (enc ? EVP_PKEY_encrypt(ctx, out, outlen, in, n) : EVP_PKEY_decrypt(ctx, out, outlen, in, n)) == 1;
    EVP_PKEY_CTX_free(ctx);
    return ok ? 0 : -1;
}

int CBenchRaw_rsa_oaep_encrypt(void *peer, const uint8_t *aad, size_t aadlen, const uint8_t *m, size_t n, uint8_t *ek, size_t *eklen, uint8_t *out,
                               uint8_t tag[16]) {
    uint8_t cek[32], iv[12];
    int ok = RAND_bytes(cek, 32) == 1 && RAND_bytes(iv, 12) == 1 && oaep((EVP_PKEY *)peer, 1, cek, 32, ek, eklen) == 0 &&
             gcm(1, cek, iv, aad, aadlen, m, n, out, tag) == 0;
    OPENSSL_cleanse(cek, sizeof cek);
    return ok ? 0 : -1;
}

int CBenchRaw_rsa_oaep_decrypt(void *own, const uint8_t *ek, size_t eklen, const uint8_t *aad, size_t aadlen, const uint8_t iv[12], const uint8_t *c,
                               size_t n, uint8_t tag[16], uint8_t *out) {
    uint8_t cek[512];
    size_t ceklen = sizeof cek;
    int ok = oaep((EVP_PKEY *)own, 0, ek, eklen, cek, &ceklen) == 0 && ceklen == 32 && gcm(0, cek, iv, aad, aadlen, c, n, out, tag) == 0;
    OPENSSL_cleanse(cek, sizeof cek);
    return ok ? 0 : -1;
}
