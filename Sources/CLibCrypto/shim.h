#ifndef TOKENMINT_CLIBCRYPTO_SHIM_H
#define TOKENMINT_CLIBCRYPTO_SHIM_H
/* The EC_KEY-level ECDSA_do_sign_ex is the only OpenSSL 3.0 entry point that
   signs with a caller-chosen nonce (RFC 6979); it is deprecated, not removed. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/encoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#endif
