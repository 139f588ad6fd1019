/* RFC 6979 deterministic ECDSA in one call: the DRBG's HMACs, k·G, k⁻¹ and
   the signature, each by libcrypto, with no allocation between them but
   OpenSSL's own. How P-256 gets k·G and k⁻¹ from OpenSSL's own set-up is
   described in nonce_source.c. */
#define OPENSSL_SUPPRESS_DEPRECATED 1 /* ECDSA_do_sign_ex: the only 3.0 entry point taking a caller's nonce */
#include "CLibCryptoShims.h"
#include "nonce_source.h"

#include <pthread.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>

enum { MAX_SCALAR = 66, MAX_HASH = 64, MAX_T = MAX_SCALAR + MAX_HASH };

/* Whether the calling thread's last signature took k·G and k⁻¹ from
   OpenSSL's set-up (`tokenmint_ecdsa_rfc6979_took_curve_setup`). */
static _Thread_local int took_curve_setup;

/* out = HMAC_key(a ‖ [separator] ‖ b ‖ c); `out` may be `key`. A NULL
   `key` reuses the context's last key without setting it up again. */
static int drbg_mac(EVP_MAC_CTX *ctx, const uint8_t *key, size_t hlen, const uint8_t *a, size_t alen,
                    int separator, const uint8_t *b, size_t blen, const uint8_t *c, size_t clen,
                    uint8_t *out) {
    uint8_t tag[MAX_HASH];
    size_t taglen = 0;
    uint8_t sep = (uint8_t)separator;
    int ok = EVP_MAC_init(ctx, key, key != NULL ? hlen : 0, NULL) == 1 && EVP_MAC_update(ctx, a, alen) == 1 &&
             (separator < 0 || EVP_MAC_update(ctx, &sep, 1) == 1) &&
             (blen == 0 || EVP_MAC_update(ctx, b, blen) == 1) &&
             (clen == 0 || EVP_MAC_update(ctx, c, clen) == 1) &&
             EVP_MAC_final(ctx, tag, &taglen, sizeof tag) == 1 && taglen == hlen;
    if (ok) memcpy(out, tag, hlen);
    OPENSSL_cleanse(tag, sizeof tag);
    return ok;
}

/* bits2int (§2.3.2): the leftmost qlen bits of `bytes`. */
static int bits2int(BIGNUM *out, const uint8_t *bytes, size_t len, int qlen) {
    if (BN_bin2bn(bytes, (int)len, out) == NULL) return 0;
    int excess = (int)len * 8 - qlen;
    return excess <= 0 || BN_rshift(out, out, excess) == 1;
}

/* k⁻¹ and r from OpenSSL's own set-up with k armed as its nonce
   (nonce_source.c): 1 when both came out and k⁻¹·k = 1 mod q, 0 when the
   caller must compute them itself. Only a libcrypto that drew k in a way
   the nonce source does not serve (a draw refused, or k⁻¹ of another k)
   stops the hand-over for the process; an allocation failure does not. */
static int setup_with_nonce(EC_KEY *key, const EC_GROUP *group, const BIGNUM *k, size_t rlen,
                            BN_CTX *bn, BIGNUM **kinv, BIGNUM **r) {
    if (EC_GROUP_get_curve_name(group) != NID_X9_62_prime256v1) return 0;
    BN_MONT_CTX *mont = EC_GROUP_get_mont_data(group);
    ERR_set_mark();
    OSSL_LIB_CTX *nonces = mont != NULL ? tokenmint_nonce_context() : NULL;
    BN_CTX *setup = nonces != NULL ? BN_CTX_secure_new_ex(nonces) : NULL;
    uint8_t bytes[MAX_SCALAR];
    int ok = 0, unexpected = 0;
    if (setup != NULL && BN_bn2binpad(k, bytes, (int)rlen) == (int)rlen) {
        tokenmint_nonce_arm(bytes, rlen);
        int done = ECDSA_sign_setup(key, setup, kinv, r);
        unexpected = tokenmint_nonce_disarm();
        if (done == 1) {
            BN_CTX_start(bn);
            BIGNUM *product = BN_CTX_get(bn);
            if (product != NULL && BN_to_montgomery(product, k, mont, bn) == 1 &&
                BN_mod_mul_montgomery(product, product, *kinv, mont, bn) == 1) {
                ok = BN_is_one(product);
                unexpected |= !ok;
            }
            BN_CTX_end(bn);
        }
    }
    ERR_pop_to_mark();
    BN_CTX_free(setup);
    OPENSSL_cleanse(bytes, sizeof bytes);
    if (!ok) {
        BN_clear_free(*kinv);
        BN_clear_free(*r);
        *kinv = *r = NULL;
        if (unexpected) tokenmint_nonce_refuse();
    }
    return ok;
}

/* Whether `EVP_MAC_init` without a key restarts an HMAC context from its
   key (OpenSSL 3.0.3 and later; in 3.0.0–3.0.2 it succeeds and changes
   nothing, so the next tag would go on from the last one's state). Tested
   once per process on a context of its own. */
static int hmac_restarts;
static pthread_once_t hmac_restarts_once = PTHREAD_ONCE_INIT;

static void hmac_restart_test(void) {
    static const uint8_t key[32] = {0x0b, 0x0b, 0x0b, 0x0b}, message[] = "restart";
    uint8_t first[64], second[64];
    size_t first_len = 0, second_len = 0;
    ERR_set_mark();
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0), OSSL_PARAM_construct_end()};
    hmac_restarts = ctx != NULL && EVP_MAC_init(ctx, key, sizeof key, params) == 1 &&
                    EVP_MAC_update(ctx, message, sizeof message) == 1 &&
                    EVP_MAC_final(ctx, first, &first_len, sizeof first) == 1 &&
                    EVP_MAC_init(ctx, NULL, 0, NULL) == 1 && EVP_MAC_update(ctx, message, sizeof message) == 1 &&
                    EVP_MAC_final(ctx, second, &second_len, sizeof second) == 1 && first_len == second_len &&
                    first_len > 0 && memcmp(first, second, first_len) == 0;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    ERR_pop_to_mark();
}

int tokenmint_ecdsa_rfc6979_took_curve_setup(void) { return took_curve_setup; }

int tokenmint_hmac_restarts(void) {
    return pthread_once(&hmac_restarts_once, hmac_restart_test) == 0 && hmac_restarts;
}

int tokenmint_ecdsa_sign_rfc6979(EC_KEY *key, const EVP_MAC_CTX *hmac_template, size_t hlen,
                                 const uint8_t *digest, size_t digest_len,
                                 uint8_t *r_out, uint8_t *s_out, size_t scalar_len, int flags) {
    took_curve_setup = 0;
    const EC_GROUP *group = EC_KEY_get0_group(key);
    const BIGNUM *order = group != NULL ? EC_GROUP_get0_order(group) : NULL;
    const BIGNUM *d = EC_KEY_get0_private_key(key);
    if (order == NULL || d == NULL || hlen == 0 || hlen > MAX_HASH || digest_len > 1024) return 0;
    int qlen = BN_num_bits(order);
    size_t rlen = (size_t)(qlen + 7) / 8;
    if (rlen > MAX_SCALAR || scalar_len != rlen) return 0;

    uint8_t x[MAX_SCALAR], h[MAX_SCALAR], v[MAX_HASH], k[MAX_HASH], t[MAX_T];
    int result = 0;
    EVP_MAC_CTX *mac = EVP_MAC_CTX_dup(hmac_template);
    BN_CTX *bn = BN_CTX_secure_new();
    EC_POINT *point = NULL; /* k·G here, when OpenSSL's set-up does not make it */
    BIGNUM *kinv = NULL, *setup_r = NULL;
    ECDSA_SIG *sig = NULL;
    if (mac == NULL || bn == NULL) goto done;
    BN_CTX_start(bn);
    BIGNUM *kbn = BN_CTX_get(bn), *px = BN_CTX_get(bn), *r = BN_CTX_get(bn);
    if (r == NULL) goto end;
    BN_set_flags(kbn, BN_FLG_CONSTTIME);

    /* x = int2octets(d); h = bits2octets(H(m)) = int2octets(bits2int(H(m)) mod q). */
    if (BN_bn2binpad(d, x, (int)rlen) != (int)rlen || !bits2int(px, digest, digest_len, qlen)) goto end;
    if (BN_cmp(px, order) >= 0 && BN_sub(px, px, order) != 1) goto end;
    if (BN_bn2binpad(px, h, (int)rlen) != (int)rlen) goto end;

    /* §3.2 b–g. A step whose key is the one the step before used (f, and
       every draw of h after g) keeps the context's key, where libcrypto can
       restart a context without it; `same` is that key otherwise. */
    const uint8_t *same = tokenmint_hmac_restarts() && !(flags & TOKENMINT_RFC6979_REKEY) ? NULL : k;
    memset(v, 0x01, hlen);
    memset(k, 0x00, hlen);
    if (!drbg_mac(mac, k, hlen, v, hlen, 0, x, rlen, h, rlen, k) ||
        !drbg_mac(mac, k, hlen, v, hlen, -1, NULL, 0, NULL, 0, v) ||
        !drbg_mac(mac, same, hlen, v, hlen, 1, x, rlen, h, rlen, k) ||
        !drbg_mac(mac, k, hlen, v, hlen, -1, NULL, 0, NULL, 0, v)) goto end;
    /* §3.2 h: draw k until it is in [1, q−1] and gives r ≠ 0 and s ≠ 0. */
    for (int round = 0; round < 64; round++) {
        size_t tlen = 0;
        while (tlen * 8 < (size_t)qlen) {
            if (!drbg_mac(mac, same, hlen, v, hlen, -1, NULL, 0, NULL, 0, v)) goto end;
            memcpy(t + tlen, v, hlen);
            tlen += hlen;
        }
        if (!bits2int(kbn, t, tlen, qlen)) goto end;
        if (!BN_is_zero(kbn) && BN_cmp(kbn, order) < 0) {
            const BIGNUM *sign_r = NULL;
            if ((flags & TOKENMINT_RFC6979_CURVE_SETUP) && setup_with_nonce(key, group, kbn, rlen, bn, &kinv, &setup_r)) {
                sign_r = setup_r;
                took_curve_setup = 1;
            } else {
                took_curve_setup = 0;
                if (point == NULL && (point = EC_POINT_new(group)) == NULL) goto end;
                if (EC_POINT_mul(group, point, kbn, NULL, NULL, bn) != 1 ||
                    EC_POINT_get_affine_coordinates(group, point, px, NULL, bn) != 1 ||
                    BN_nnmod(r, px, order, bn) != 1) goto end;
                if (!BN_is_zero(r)) {
                    if ((kinv = BN_mod_inverse(NULL, kbn, order, bn)) == NULL) goto end;
                    sign_r = r;
                }
            }
            if (sign_r != NULL) {
                ERR_set_mark();
                sig = ECDSA_do_sign_ex(digest, (int)digest_len, kinv, sign_r, key);
                BN_clear_free(kinv);
                kinv = NULL;
                if (sig != NULL) {
                    ERR_pop_to_mark();
                    const BIGNUM *sr = ECDSA_SIG_get0_r(sig), *ss = ECDSA_SIG_get0_s(sig);
                    result = BN_bn2binpad(sr, r_out, (int)rlen) == (int)rlen &&
                             BN_bn2binpad(ss, s_out, (int)rlen) == (int)rlen;
                    goto end;
                }
                /* s = 0: OpenSSL asks for new set-up values, so the next k is
                   drawn (its error is dropped, the caller's queue kept). Any
                   other failure is libcrypto's, reported as it is. */
                if (ERR_GET_REASON(ERR_peek_last_error()) != EC_R_NEED_NEW_SETUP_VALUES) {
                    ERR_clear_last_mark();
                    goto end;
                }
                ERR_pop_to_mark();
                BN_free(setup_r);
                setup_r = NULL;
            }
        }
        /* K = HMAC_K(V ‖ 0x00); V = HMAC_K(V). */
        if (!drbg_mac(mac, same, hlen, v, hlen, 0, NULL, 0, NULL, 0, k) ||
            !drbg_mac(mac, k, hlen, v, hlen, -1, NULL, 0, NULL, 0, v)) goto end;
    }
    result = -1;
end:
    BN_CTX_end(bn); /* a secure BN_CTX clears its numbers when it is freed */
done:
    BN_clear_free(kinv);
    BN_free(setup_r);
    ECDSA_SIG_free(sig);
    EC_POINT_clear_free(point);
    BN_CTX_free(bn);
    EVP_MAC_CTX_free(mac);
    OPENSSL_cleanse(x, sizeof x);
    OPENSSL_cleanse(h, sizeof h);
    OPENSSL_cleanse(v, sizeof v);
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(t, sizeof t);
    return result;
}
