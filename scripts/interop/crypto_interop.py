#!/usr/bin/env python3
"""Interop checks between the TokenMint CLI and pyca/cryptography.

Direction A (TokenMint -> cryptography): keys and signatures made by
`tokenmint keygen` / `tokenmint sign` are loaded and verified by cryptography.
Direction B (cryptography -> TokenMint): keys and signatures made by
cryptography are checked with `tokenmint verify` (and TokenMint signs with
cryptography's keys).

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
Prints one line per check group and ends with `N passed, M failed`.
"""
import os
import re
import subprocess
import sys
import tempfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature, encode_dss_signature)

from tmcli import Checks, Fail, expect

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
ALGS = ["EdDSA", "Ed448", "ES256", "ES384", "ES512", "RS256", "RS384", "RS512",
        "PS256", "PS384", "PS512"]
EDWARDS = ("EdDSA", "Ed25519", "Ed448")   # the key decides the curve; RFC 9864 names are bound to theirs
HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
CURVES = {"ES256": ("secp256r1", 32), "ES384": ("secp384r1", 48), "ES512": ("secp521r1", 66)}
KEYGEN_BITS = {"256": 2048, "384": 3072, "512": 4096}   # RSA key size for RS*/PS* in direction A
MESSAGE_SIZES = [0, 1, 100, 1000]
PEM, DER = serialization.Encoding.PEM, serialization.Encoding.DER
SPKI = serialization.PublicFormat.SubjectPublicKeyInfo

checks = Checks()


def hash_for(alg):
    return HASHES[alg[2:]]()


def _has_deterministic_ecdsa():
    try:
        ec.generate_private_key(ec.SECP256R1()).sign(
            b"", ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        return True
    except Exception:
        return False


HAVE_RFC6979 = _has_deterministic_ecdsa()


# ---- TokenMint CLI ---------------------------------------------------------

def tm(*args):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True, timeout=300)


def tm_ok(*args):
    p = tm(*args)
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])  # the end says what went wrong
        raise Fail(f"`tokenmint {args[0]}` exited {p.returncode}: {tail[-400:]}")
    return p.stdout.strip()


def tm_sign(key, alg, flags, msg, tmp):
    if len(msg) >= 1000:  # exercise --in as well as --hex
        path = os.path.join(tmp, "msg.bin")
        with open(path, "wb") as f:
            f.write(msg)
        source = ["--in", path]
    else:
        source = ["--hex", msg.hex()]
    out = tm_ok("sign", "--key", key, "--alg", alg, *flags, *source)
    expect(re.fullmatch(r"(?:[0-9a-f]{2})+", out) is not None,
           f"sign output is not lowercase hex: {out[:80]!r}")
    return bytes.fromhex(out)


# ---- cryptography side -----------------------------------------------------

def py_sign(priv, alg, msg, der=False, deterministic=False):
    if alg in EDWARDS:
        return priv.sign(msg)
    h = hash_for(alg)
    if alg.startswith("ES"):
        scheme = ec.ECDSA(h, deterministic_signing=True) if deterministic else ec.ECDSA(h)
        sig = priv.sign(msg, scheme)
        if der:
            return sig
        r, s = decode_dss_signature(sig)
        n = CURVES[alg][1]
        return r.to_bytes(n, "big") + s.to_bytes(n, "big")
    if alg.startswith("RS"):
        return priv.sign(msg, padding.PKCS1v15(), h)
    return priv.sign(msg, padding.PSS(padding.MGF1(h), h.digest_size), h)


def py_verify(pub, alg, msg, sig, der=False):
    try:
        if alg in EDWARDS:
            pub.verify(sig, msg)
            return
        h = hash_for(alg)
        if alg.startswith("ES"):
            if not der:
                n = CURVES[alg][1]
                expect(len(sig) == 2 * n, f"raw r||s is {len(sig)} bytes, want {2 * n}")
                sig = encode_dss_signature(int.from_bytes(sig[:n], "big"),
                                           int.from_bytes(sig[n:], "big"))
            pub.verify(sig, msg, ec.ECDSA(h))
        elif alg.startswith("RS"):
            pub.verify(sig, msg, padding.PKCS1v15(), h)
        else:
            pub.verify(sig, msg, padding.PSS(padding.MGF1(h), h.digest_size), h)
    except InvalidSignature:
        raise Fail(f"cryptography rejects TokenMint's {alg} signature ({len(msg)}-byte message)")


def check_key_type(alg, priv):
    if alg == "EdDSA":
        expect(isinstance(priv, ed25519.Ed25519PrivateKey), f"keygen gave {type(priv).__name__}")
    elif alg == "Ed448":
        expect(isinstance(priv, ed448.Ed448PrivateKey), f"keygen gave {type(priv).__name__}")
    elif alg.startswith("ES"):
        expect(isinstance(priv, ec.EllipticCurvePrivateKey) and priv.curve.name == CURVES[alg][0],
               f"keygen gave {type(priv).__name__} {getattr(priv, 'curve', None)}")
    else:
        want = KEYGEN_BITS[alg[2:]]
        expect(isinstance(priv, rsa.RSAPrivateKey) and priv.key_size == want,
               f"keygen gave {type(priv).__name__} of {getattr(priv, 'key_size', '?')} bits, want {want}")


# ---- check groups ----------------------------------------------------------

def check_a(alg, flags, tmp):
    """TokenMint keygen/pubkey/sign, verified by cryptography."""
    key = os.path.join(tmp, f"a-{alg}{''.join(flags)}.pem")
    args = ["keygen", "--alg", alg, "--out", key]
    if alg[:2] in ("RS", "PS"):
        args += ["--bits", str(KEYGEN_BITS[alg[2:]])]
    tm_ok(*args)
    with open(key, "rb") as f:
        pem = f.read()
    expect(pem.startswith(b"-----BEGIN PRIVATE KEY-----"), "keygen output is not a PKCS#8 PEM")
    priv = serialization.load_pem_private_key(pem, password=None)
    check_key_type(alg, priv)
    pub_pem = tm_ok("pubkey", key)
    expect(pub_pem.startswith("-----BEGIN PUBLIC KEY-----"), "pubkey output is not an SPKI PEM")
    pub = serialization.load_pem_public_key(pub_pem.encode())
    expect(pub.public_bytes(DER, SPKI) == priv.public_key().public_bytes(DER, SPKI),
           "pubkey output does not match the private key")
    der, det = "--der" in flags, "--deterministic" in flags
    for size in MESSAGE_SIZES:
        msg = os.urandom(size)
        sig = tm_sign(key, alg, flags, msg, tmp)
        py_verify(pub, alg, msg, sig, der)
        if det:
            expect(tm_sign(key, alg, flags, msg, tmp) == sig,
                   "two --deterministic signatures of the same message differ")
            if HAVE_RFC6979:
                expect(sig == py_sign(priv, alg, msg, der, deterministic=True),
                       "deterministic signature differs from RFC 6979 (cryptography)")
        if alg in EDWARDS or alg.startswith("RS"):  # deterministic schemes: must match byte for byte
            expect(sig == py_sign(priv, alg, msg), "signature differs from cryptography's")


def check_b(alg, priv, form, tmp, label):
    """cryptography keys and signatures, checked by tokenmint verify."""
    priv_pem = os.path.join(tmp, f"b-{label}.key.pem")
    pub_pem = os.path.join(tmp, f"b-{label}.pub.pem")
    with open(priv_pem, "wb") as f:
        f.write(priv.private_bytes(PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
    with open(pub_pem, "wb") as f:
        f.write(priv.public_key().public_bytes(PEM, SPKI))
    der = form == "der"
    flags = ["--der"] if der else []
    msg = os.urandom(100)
    sig = py_sign(priv, alg, msg, der)

    def verify(keyfile, s):
        return tm("verify", "--key", keyfile, "--alg", alg, *flags,
                  "--sig", s.hex(), "--hex", msg.hex()).returncode

    rc = verify(pub_pem, sig)
    expect(rc == 0, f"valid signature with public PEM: exit {rc}, want 0")
    flipped = sig[:-1] + bytes([sig[-1] ^ 0x01])
    rc = verify(pub_pem, flipped)
    expect(rc == 1, f"signature with one bit flipped: exit {rc}, want 1")
    rc = verify(priv_pem, sig)
    expect(rc == 0, f"valid signature with private PEM as key: exit {rc}, want 0")
    # and TokenMint signs with cryptography's PKCS#8 key
    py_verify(priv.public_key(), alg, msg, tm_sign(priv_pem, alg, flags, msg, tmp), der)


def check_cross_curve(tmp):
    """RFC 9864 names are bound to their curve: Ed25519 never with an Ed448 key, nor Ed448 with an Ed25519 key."""
    msg = os.urandom(32)
    for priv, wrong in ((ed448.Ed448PrivateKey.generate(), "Ed25519"), (ed25519.Ed25519PrivateKey.generate(), "Ed448")):
        path = os.path.join(tmp, f"cross-{wrong}.pub.pem")
        with open(path, "wb") as f:
            f.write(priv.public_key().public_bytes(PEM, SPKI))
        rc = tm("verify", "--key", path, "--alg", wrong, "--sig", priv.sign(msg).hex(), "--hex", msg.hex()).returncode
        expect(rc == 2, f"--alg {wrong} with the other curve's key: exit {rc}, want 2")


def check_bad_input(tmp):
    """Malformed key files and signature hex give exit 2."""
    files = {
        "garbage PEM": b"-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
        "random bytes": os.urandom(64),
        "empty file": b"",
    }
    for what, content in files.items():
        path = os.path.join(tmp, "bad-key.pem")
        with open(path, "wb") as f:
            f.write(content)
        rc = tm("verify", "--key", path, "--alg", "ES256", "--sig", "00" * 64, "--hex", "00").returncode
        expect(rc == 2, f"{what} as key file: exit {rc}, want 2")
    rc = tm("verify", "--key", os.path.join(tmp, "missing.pem"), "--alg", "ES256",
            "--sig", "00" * 64, "--hex", "00").returncode
    expect(rc == 2, f"missing key file: exit {rc}, want 2")
    good = os.path.join(tmp, "good.pub.pem")
    with open(good, "wb") as f:
        f.write(ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(PEM, SPKI))
    rc = tm("verify", "--key", good, "--alg", "ES256", "--sig", "zz", "--hex", "00").returncode
    expect(rc == 2, f"non-hex --sig: exit {rc}, want 2")



def main():
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory(prefix="tokenmint-interop-") as tmp:
        print(f"# Direction A: TokenMint -> cryptography (RFC 6979 reference: {HAVE_RFC6979})")
        for alg in ALGS:
            variants = ([[], ["--der"], ["--deterministic"], ["--deterministic", "--der"]]
                        if alg.startswith("ES") else [[]])
            for flags in variants:
                checks.group(f"A {alg} {' '.join(flags)}".rstrip(), check_a, alg, flags, tmp)

        print("# Direction B: cryptography -> TokenMint")
        rsa_algs = [a for a in ALGS if a[:2] in ("RS", "PS")]
        keys = [("Ed25519", ed25519.Ed25519PrivateKey.generate(), ["EdDSA", "Ed25519"]),
                ("Ed448", ed448.Ed448PrivateKey.generate(), ["Ed448", "EdDSA"]),
                ("P-256", ec.generate_private_key(ec.SECP256R1()), ["ES256"]),
                ("P-384", ec.generate_private_key(ec.SECP384R1()), ["ES384"]),
                ("P-521", ec.generate_private_key(ec.SECP521R1()), ["ES512"]),
                ("RSA-2048", rsa.generate_private_key(65537, 2048), rsa_algs),
                ("RSA-3072", rsa.generate_private_key(65537, 3072), rsa_algs)]
        for key_name, priv, algs in keys:
            for alg in algs:
                for form in (["raw", "der"] if alg.startswith("ES") else [None]):
                    label = f"{key_name}-{alg}" + (f"-{form}" if form else "")
                    checks.group(f"B {alg} {key_name}" + (f" {form}" if form else ""),
                              check_b, alg, priv, form, tmp, label)
        checks.group("B malformed key/signature input -> exit 2", check_bad_input, tmp)
        checks.group("B an Edwards key under the other curve's name -> exit 2", check_cross_curve, tmp)

    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
