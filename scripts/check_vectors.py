#!/usr/bin/env python3
"""Recompute every known-answer vector in Vectors/ with Python `cryptography`.

Run from the repository root:  python3 scripts/check_vectors.py
Prints one line per file and exits 0 only if every case checks out.
"""
import hashlib
import json
import os
import re
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature, encode_dss_signature)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

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


FILES = [("rfc8032-ed25519.json", "Ed25519", check_ed25519, 5),
         ("rfc6979-ecdsa.json", "ECDSA-deterministic", check_ecdsa, 24),
         ("rfc4231-hmac.json", "HMAC", check_hmac, 21)]


def main():
    failed = False
    for name, algorithm, check, count in FILES:
        with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
            doc = json.load(f)
        errors = []
        if doc.get("schema") != "tokenmint_kat_v1" or doc.get("algorithm") != algorithm:
            errors.append("schema/algorithm header")
        if not isinstance(doc.get("source"), str):
            errors.append("missing source")
        tests = doc.get("tests", [])
        if [t.get("tcId") for t in tests] != list(range(1, count + 1)):
            errors.append("expected tcId 1..%d" % count)
        ok = 0
        for t in tests:
            try:
                assert isinstance(t.get("comment"), str) and t["comment"], "comment"
                check(t)
                ok += 1
            except (AssertionError, KeyError, ValueError, InvalidSignature) as exc:
                errors.append("tcId %s: %s" % (t.get("tcId"), exc or type(exc).__name__))
        if errors:
            failed = True
            print("%s: %d ok, FAILED: %s" % (name, ok, "; ".join(errors)))
        else:
            print("%s: %d ok" % (name, ok))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
