#!/usr/bin/env python3
"""Recompute every known-answer vector in Vectors/ with Python `cryptography`
(and, for the JOSE files, `joserfc` as a second, independent JOSE stack).

Run from the repository root:  .venv-interop/bin/python scripts/check_vectors.py
Prints one line per file and exits 0 only if every case checks out.
"""
import base64
import hashlib
import json
import os
import re
import sys
import warnings

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature, encode_dss_signature)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from joserfc import jws as joserfc_jws
from joserfc import jwk as joserfc_jwk
from joserfc.errors import JoseError

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Vectors")
HEX = re.compile(r"^([0-9a-f]{2})*$")
HASHES = {"SHA-224": hashes.SHA224, "SHA-256": hashes.SHA256,
          "SHA-384": hashes.SHA384, "SHA-512": hashes.SHA512}
CURVES = {"P-256": (ec.SECP256R1, 32), "P-384": (ec.SECP384R1, 48),
          "P-521": (ec.SECP521R1, 66)}
ORDERS = {
    "P-256": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    "P-384": int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF"
                 "581A0DB248B0A77AECEC196ACCC52973", 16),
    "P-521": int("1" + "F" * 63 +
                 "FFA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386"
                 "409", 16),
}
assert [ORDERS[c].bit_length() for c in CURVES] == [256, 384, 521]


def b(t, field, size=None):
    v = t[field]
    assert isinstance(v, str) and HEX.match(v), "%s is not lowercase hex" % field
    raw = bytes.fromhex(v)
    assert size is None or len(raw) == size, "%s is %d bytes, want %d" % (field, len(raw), size)
    return raw


def check_ed25519(t):
    sk = ed25519.Ed25519PrivateKey.from_private_bytes(b(t, "secretKey", 32))
    pk = b(t, "publicKey", 32)
    msg, sig = b(t, "msg"), b(t, "sig", 64)
    assert sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) == pk, "publicKey"
    if t["comment"] == "TEST SHA(abc)":
        assert msg == hashlib.sha512(b"abc").digest(), "msg is not SHA-512('abc')"
    assert sk.sign(msg) == sig, "sig"
    ed25519.Ed25519PublicKey.from_public_bytes(pk).verify(sig, msg)


def check_ecdsa(t):
    curve, size = CURVES[t["curve"]]
    n, hash_cls = ORDERS[t["curve"]], HASHES[t["hash"]]
    d = int.from_bytes(b(t, "privateKey", size), "big")
    ux = int.from_bytes(b(t, "publicKeyX", size), "big")
    uy = int.from_bytes(b(t, "publicKeyY", size), "big")
    k = int.from_bytes(b(t, "k", size), "big")
    r = int.from_bytes(b(t, "r", size), "big")
    s = int.from_bytes(b(t, "s", size), "big")
    msg = b(t, "msg")
    key = ec.derive_private_key(d, curve())
    pub = key.public_key().public_numbers()
    assert (pub.x, pub.y) == (ux, uy), "public key does not match privateKey"
    # r must be x(kG) mod n, and s = k^-1 (e + r d) mod n with e = bits2int(H(m)).
    assert ec.derive_private_key(k, curve()).public_key().public_numbers().x % n == r, "k/r"
    digest = hashes.Hash(hash_cls())
    digest.update(msg)
    hv = digest.finalize()
    e = int.from_bytes(hv, "big") >> max(0, 8 * len(hv) - n.bit_length())
    assert pow(k, -1, n) * (e + r * d) % n == s, "k/s"
    der = key.sign(msg, ec.ECDSA(hash_cls(), deterministic_signing=True))
    assert decode_dss_signature(der) == (r, s), "deterministic signature differs"
    key.public_key().verify(encode_dss_signature(r, s), msg, ec.ECDSA(hash_cls()))


def check_hmac(t):
    hash_cls = HASHES[t["hash"]]
    bits = t["truncatedBits"]
    assert bits in (0, 128), "truncatedBits"
    m = hmac.HMAC(b(t, "key"), hash_cls())
    m.update(b(t, "msg"))
    full = m.finalize()
    want = full[:bits // 8] if bits else full
    assert b(t, "tag", len(want)) == want, "tag"


# ---- JOSE files (tokenmint_jose_kat_v1) -------------------------------------

B64URL = re.compile(r"^[A-Za-z0-9_-]*$")
JWS_HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
JWS_CURVES = {"ES256": ("P-256", ec.SECP256R1, 32), "ES384": ("P-384", ec.SECP384R1, 48),
              "ES512": ("P-521", ec.SECP521R1, 66)}
# RFC 7638 section 3.2: the members that make up the thumbprint input, per kty.
THUMBPRINT_MEMBERS = {"RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y"),
                      "OKP": ("crv", "kty", "x"), "oct": ("k", "kty")}


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64url(text, field):
    assert isinstance(text, str) and B64URL.match(text) and len(text) % 4 != 1, \
        "%s is not unpadded base64url" % field
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    assert b64url(raw) == text, "%s is not canonical base64url" % field
    return raw


def jwk_int(jwk, name):
    return int.from_bytes(unb64url(jwk[name], "jwk." + name), "big")


def check_jws(t):
    alg, jwk = t["alg"], t["jwk"]
    header_text, payload_text = t["protectedHeader"], t["payload"]
    signing_input, signature, compact = t["signingInput"], t["signature"], t["compact"]
    header = json.loads(header_text)
    assert header.get("alg") == alg, "protectedHeader alg is not %r" % alg
    assert signing_input == (b64url(header_text.encode("utf-8")) + "." +
                             b64url(payload_text.encode("utf-8"))), "signingInput"
    assert compact == signing_input + "." + signature, "compact"
    assert compact.count(".") == 2, "compact has not three parts"
    sig = unb64url(signature, "signature")
    msg = signing_input.encode("ascii")
    assert t["deterministic"] is (not alg.startswith("ES")), "deterministic"

    if alg == "none":
        assert jwk is None and sig == b"", "an unsecured JWS has no key and an empty signature"
        return
    if alg.startswith("HS"):
        assert jwk["kty"] == "oct", "kty"
        m = hmac.HMAC(unb64url(jwk["k"], "jwk.k"), JWS_HASHES[alg[2:]]())
        m.update(msg)
        assert m.finalize() == sig, "HMAC differs from signature"
    elif alg.startswith("RS"):
        assert jwk["kty"] == "RSA", "kty"
        n, e, d = jwk_int(jwk, "n"), jwk_int(jwk, "e"), jwk_int(jwk, "d")
        p, q = jwk_int(jwk, "p"), jwk_int(jwk, "q")
        dp, dq, qi = jwk_int(jwk, "dp"), jwk_int(jwk, "dq"), jwk_int(jwk, "qi")
        assert p * q == n, "p*q != n"
        assert (dp, dq, qi) == (d % (p - 1), d % (q - 1), pow(q, -1, p)), "CRT parameters"
        key = rsa.RSAPrivateNumbers(p, q, d, dp, dq, qi, rsa.RSAPublicNumbers(e, n)).private_key()
        hash_cls = JWS_HASHES[alg[2:]]
        # RSASSA-PKCS1-v1_5 is deterministic: re-signing must give the RFC's bytes.
        assert key.sign(msg, padding.PKCS1v15(), hash_cls()) == sig, "re-signed RSA signature differs"
        key.public_key().verify(sig, msg, padding.PKCS1v15(), hash_cls())
    elif alg.startswith("ES"):
        crv, curve, size = JWS_CURVES[alg]
        assert jwk["kty"] == "EC" and jwk["crv"] == crv, "kty/crv"
        for name in ("x", "y", "d"):
            assert len(unb64url(jwk[name], "jwk." + name)) == size, "jwk.%s length" % name
        key = ec.derive_private_key(jwk_int(jwk, "d"), curve())
        pub = key.public_key().public_numbers()
        assert (pub.x, pub.y) == (jwk_int(jwk, "x"), jwk_int(jwk, "y")), "x/y do not match d"
        assert len(sig) == 2 * size, "signature is not r||s of %d bytes each" % size
        r, s = int.from_bytes(sig[:size], "big"), int.from_bytes(sig[size:], "big")
        key.public_key().verify(encode_dss_signature(r, s), msg, ec.ECDSA(JWS_HASHES[alg[2:]]()))
    else:
        raise AssertionError("unknown alg %r" % alg)

    # Second opinion: joserfc verifies the compact JWS with the JWK (alg pinned).
    try:
        obj = joserfc_jws.deserialize_compact(compact, joserfc_jwk.import_key(jwk), algorithms=[alg])
    except JoseError as exc:
        raise AssertionError("joserfc rejects it: %s" % exc)
    assert obj.payload == payload_text.encode("utf-8"), "joserfc payload"


def check_thumbprint(t):
    jwk = t["jwk"]
    members = THUMBPRINT_MEMBERS[jwk["kty"]]
    canonical = json.dumps({k: jwk[k] for k in members}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    by_hand = b64url(hashlib.sha256(canonical.encode("utf-8")).digest())
    assert by_hand == t["sha256"], "sha256 of the canonical JSON is %s" % by_hand
    by_joserfc = joserfc_jwk.import_key(jwk).thumbprint()
    assert by_joserfc == t["sha256"], "joserfc thumbprint is %s" % by_joserfc


# (file, schema, algorithm or None, list member, check, case count)
FILES = [("rfc8032-ed25519.json", "tokenmint_kat_v1", "Ed25519", "tests", check_ed25519, 5),
         ("rfc6979-ecdsa.json", "tokenmint_kat_v1", "ECDSA-deterministic", "tests", check_ecdsa, 24),
         ("rfc4231-hmac.json", "tokenmint_kat_v1", "HMAC", "tests", check_hmac, 21),
         ("rfc7515-jws.json", "tokenmint_jose_kat_v1", None, "tests", check_jws, 5),
         ("rfc7638-thumbprint.json", "tokenmint_jose_kat_v1", None, "thumbprints", check_thumbprint, 2)]


def main():
    warnings.simplefilter("ignore")  # joserfc's SecurityWarnings would break one line per file
    failed = False
    for name, schema, algorithm, member, check, count in FILES:
        with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
            doc = json.load(f)
        errors = []
        if doc.get("schema") != schema or doc.get("algorithm") != algorithm:
            errors.append("schema/algorithm header")
        if not isinstance(doc.get("source"), str):
            errors.append("missing source")
        tests = doc.get(member, [])
        if [t.get("tcId") for t in tests] != list(range(1, count + 1)):
            errors.append("expected tcId 1..%d" % count)
        ok = 0
        for t in tests:
            try:
                assert isinstance(t.get("comment"), str) and t["comment"], "comment"
                check(t)
                ok += 1
            except (AssertionError, KeyError, TypeError, ValueError, InvalidSignature) as exc:
                errors.append("tcId %s: %s" % (t.get("tcId"), str(exc) or type(exc).__name__))
        if errors:
            failed = True
            print("%s: %d ok, FAILED: %s" % (name, ok, "; ".join(errors)))
        else:
            print("%s: %d ok" % (name, ok))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
