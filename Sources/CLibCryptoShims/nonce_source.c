/* A caller's nonce for OpenSSL 3.0's own ECDSA set-up.

   `ECDSA_sign_setup` draws k from the random generator of its `BN_CTX`'s
   library context, then computes k·G, r and k⁻¹ with the curve's own
   routines (for P-256 the constant-time `ecp_nistz256_inv_mod_ord`, which
   3.0 does not export). This file gives it an RFC 6979 k instead of a
   random one: a private library context whose only generator is the one
   below. That generator serves exactly the k its thread armed for one call
   and fails every other draw, so nothing else can ever read from it.

   It is not a random generator and produces nothing of its own: it hands
   over bytes. The caller (rfc6979.c) checks that the k⁻¹ it gets back is
   the inverse of its k, and computes k·G and k⁻¹ itself on any failure; a
   refused draw or a k⁻¹ of another k (a libcrypto that draws k otherwise)
   stops the hand-over for the rest of the process. r is taken as OpenSSL
   computes it, x(k·G) of the scalar it inverted (one set-up call makes both
   from one BIGNUM in 3.0 to 3.5); checking it would cost the k·G this
   saves. Only P-256 uses it: on the generic curves, OpenSSL's ladder draws
   a blinding value from the same generator, and their signing met its goal
   without it. */
#include "nonce_source.h"
#include "CLibCryptoShims.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

/* The armed nonce of this thread: a pointer to the caller's buffer (no copy
   is made), disarmed by the first draw and by `nonce_disarm`. */
static _Thread_local const uint8_t *armed;
static _Thread_local size_t armed_len;
static _Thread_local int refused;

void tokenmint_nonce_arm(const uint8_t *k, size_t len) {
    armed = k;
    armed_len = len;
    refused = 0;
}

int tokenmint_nonce_disarm(void) {
    armed = NULL;
    armed_len = 0;
    return refused;
}

/* The generator's instance holds only its state: the bytes live with the
   thread that armed them. */
typedef struct {
    int state;
} NonceInstance;

static void *nonce_new(void *provctx, void *parent, const OSSL_DISPATCH *parent_dispatch) {
    (void)provctx; (void)parent; (void)parent_dispatch;
    NonceInstance *instance = OPENSSL_zalloc(sizeof *instance);
    if (instance != NULL) instance->state = EVP_RAND_STATE_UNINITIALISED;
    return instance;
}

static void nonce_free(void *vinstance) { OPENSSL_free(vinstance); }

static int nonce_instantiate(void *vinstance, unsigned int strength, int prediction_resistance,
                             const unsigned char *pstr, size_t pstr_len, const OSSL_PARAM params[]) {
    (void)strength; (void)prediction_resistance; (void)pstr; (void)pstr_len; (void)params;
    ((NonceInstance *)vinstance)->state = EVP_RAND_STATE_READY;
    return 1;
}

static int nonce_uninstantiate(void *vinstance) {
    ((NonceInstance *)vinstance)->state = EVP_RAND_STATE_UNINITIALISED;
    return 1;
}

/* The armed k, right-aligned in `out` after zero bytes: libcrypto draws the
   order's byte length (or a byte more) and masks it to the order's bits,
   which leaves k. Any draw without an armed k, or shorter than k, fails. */
static int nonce_generate(void *vinstance, unsigned char *out, size_t outlen, unsigned int strength,
                          int prediction_resistance, const unsigned char *adin, size_t adin_len) {
    (void)vinstance; (void)strength; (void)prediction_resistance; (void)adin; (void)adin_len;
    const uint8_t *k = armed;
    size_t len = armed_len;
    armed = NULL;
    armed_len = 0;
    if (k == NULL || outlen < len) {
        refused = 1;
        return 0;
    }
    memset(out, 0, outlen - len);
    memcpy(out + (outlen - len), k, len);
    return 1;
}

static int nonce_reseed(void *vinstance, int prediction_resistance, const unsigned char *entropy,
                        size_t entropy_len, const unsigned char *adin, size_t adin_len) {
    (void)vinstance; (void)prediction_resistance; (void)entropy; (void)entropy_len; (void)adin; (void)adin_len;
    return 1;
}

/* Each instance is used by one thread (the library context's private
   generator is per thread; its primary is never drawn from), so locking has
   nothing to guard. */
static int nonce_enable_locking(void *vinstance) { (void)vinstance; return 1; }
static int nonce_lock(void *vinstance) { (void)vinstance; return 1; }
static void nonce_unlock(void *vinstance) { (void)vinstance; }

static int nonce_get_ctx_params(void *vinstance, OSSL_PARAM params[]) {
    OSSL_PARAM *p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STATE);
    if (p != NULL && !OSSL_PARAM_set_int(p, ((NonceInstance *)vinstance)->state)) return 0;
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STRENGTH);
    if (p != NULL && !OSSL_PARAM_set_uint(p, 256)) return 0;
    p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_MAX_REQUEST);
    if (p != NULL && !OSSL_PARAM_set_size_t(p, 1024)) return 0;
    return 1;
}

static const OSSL_PARAM *nonce_gettable_ctx_params(void *vinstance, void *provctx) {
    (void)vinstance; (void)provctx;
    static const OSSL_PARAM gettable[] = {
        OSSL_PARAM_int(OSSL_RAND_PARAM_STATE, NULL),
        OSSL_PARAM_uint(OSSL_RAND_PARAM_STRENGTH, NULL),
        OSSL_PARAM_size_t(OSSL_RAND_PARAM_MAX_REQUEST, NULL),
        OSSL_PARAM_END,
    };
    return gettable;
}

static int nonce_verify_zeroization(void *vinstance) { (void)vinstance; return 1; }

static const OSSL_DISPATCH nonce_functions[] = {
    {OSSL_FUNC_RAND_NEWCTX, (void (*)(void))nonce_new},
    {OSSL_FUNC_RAND_FREECTX, (void (*)(void))nonce_free},
    {OSSL_FUNC_RAND_INSTANTIATE, (void (*)(void))nonce_instantiate},
    {OSSL_FUNC_RAND_UNINSTANTIATE, (void (*)(void))nonce_uninstantiate},
    {OSSL_FUNC_RAND_GENERATE, (void (*)(void))nonce_generate},
    {OSSL_FUNC_RAND_RESEED, (void (*)(void))nonce_reseed},
    {OSSL_FUNC_RAND_ENABLE_LOCKING, (void (*)(void))nonce_enable_locking},
    {OSSL_FUNC_RAND_LOCK, (void (*)(void))nonce_lock},
    {OSSL_FUNC_RAND_UNLOCK, (void (*)(void))nonce_unlock},
    {OSSL_FUNC_RAND_GET_CTX_PARAMS, (void (*)(void))nonce_get_ctx_params},
    {OSSL_FUNC_RAND_GETTABLE_CTX_PARAMS, (void (*)(void))nonce_gettable_ctx_params},
    {OSSL_FUNC_RAND_VERIFY_ZEROIZATION, (void (*)(void))nonce_verify_zeroization},
    {0, NULL},
};

#define NONCE_PROVIDER "tokenmint-nonce"
#define NONCE_RAND "TOKENMINT-NONCE"

static const OSSL_ALGORITHM nonce_algorithms[] = {
    {NONCE_RAND, "provider=" NONCE_PROVIDER, nonce_functions, "an armed caller's nonce"},
    {NULL, NULL, NULL, NULL},
};

static const OSSL_ALGORITHM *nonce_query(void *provctx, int operation, int *no_cache) {
    (void)provctx;
    *no_cache = 0;
    return operation == OSSL_OP_RAND ? nonce_algorithms : NULL;
}

static const OSSL_DISPATCH nonce_provider_functions[] = {
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))nonce_query},
    {0, NULL},
};

static int nonce_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                               const OSSL_DISPATCH **out, void **provctx) {
    (void)in;
    *out = nonce_provider_functions;
    *provctx = (void *)handle;
    return 1;
}

static OSSL_LIB_CTX *nonce_context;
static atomic_int nonce_refused;
static pthread_once_t nonce_once = PTHREAD_ONCE_INIT;

/* Built once per process and kept for its life: a library context that
   knows only the generator above. */
static void nonce_setup(void) {
    ERR_set_mark(); /* a context that cannot be built is no error of the signer's */
    OSSL_LIB_CTX *context = OSSL_LIB_CTX_new();
    if (context != NULL &&
        (OSSL_PROVIDER_add_builtin(context, NONCE_PROVIDER, nonce_provider_init) != 1 ||
         OSSL_PROVIDER_load(context, NONCE_PROVIDER) == NULL ||
         RAND_set_DRBG_type(context, NONCE_RAND, NULL, NULL, NULL) != 1)) {
        OSSL_LIB_CTX_free(context);
        context = NULL;
    }
    nonce_context = context;
    ERR_pop_to_mark();
}

OSSL_LIB_CTX *tokenmint_nonce_context(void) {
    if (atomic_load_explicit(&nonce_refused, memory_order_relaxed)) return NULL;
    if (pthread_once(&nonce_once, nonce_setup) != 0) return NULL;
    return nonce_context;
}

void tokenmint_nonce_refuse(void) { atomic_store_explicit(&nonce_refused, 1, memory_order_relaxed); }

int tokenmint_ecdsa_rfc6979_curve_setup_live(void) { return tokenmint_nonce_context() != NULL; }
