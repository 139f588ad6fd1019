#!/usr/bin/env python3
"""ML-DSA (FIPS 204) for JOSE (RFC 9964) between the TokenMint CLI, built
with the MLDSA trait (swift-crypto's BoringSSL), and pyca/cryptography's
ML-DSA (the OpenSSL bundled in its wheel, 4.0 here), both
directions, for ML-DSA-44, -65 and -87.

A (keys): a seed from Python becomes an AKP JWK (kty AKP, alg, pub, priv);
TokenMint reads it, and its public JWK and RFC 7638 thumbprint are the ones
Python computes from the seed; `tokenmint keygen --jwk` makes a key whose pub
Python derives again from its priv seed.
B (TokenMint signs -> cryptography verifies): `tokenmint jwt sign` with the
AKP JWK; Python checks the signature over the JWS signing input (empty
context), and refuses it under a context and after a byte changes.
C (cryptography signs -> TokenMint verifies): JWTs whose signature Python
made; `tokenmint jwt verify` with the public JWK accepts them and prints the
claims.
D (refusals, exit 1 or 2 after a passing control): a signature made with a
context, a changed payload, a key of another parameter set, a token whose
alg names another set, an AKP JWK without alg, with a pub one byte short,
and with a priv that does not give its pub; RFC 9964's example JWS is
checked by Python too (the vector itself, independently of TokenMint).

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint). Prints one
line per check group and ends with `N passed, M failed`.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import mldsa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmcli import TOKENMINT, Checks, Fail, b64d, b64u, expect  # noqa: E402

SETS = {
    "ML-DSA-44": mldsa.MLDSA44PrivateKey,
    "ML-DSA-65": mldsa.MLDSA65PrivateKey,
    "ML-DSA-87": mldsa.MLDSA87PrivateKey,
}
PUBLIC = {
    "ML-DSA-44": mldsa.MLDSA44PublicKey,
    "ML-DSA-65": mldsa.MLDSA65PublicKey,
    "ML-DSA-87": mldsa.MLDSA87PublicKey,
}
VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Vectors", "ml-dsa-jose")

checks = Checks()
work = tempfile.mkdtemp(prefix="tokenmint-mldsa-")


def cli(*args):
    proc = subprocess.run([TOKENMINT, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def write(name, text):
    path = os.path.join(work, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def akp(alg, seed, private=True):
    key = SETS[alg].from_seed_bytes(seed)
    jwk = {"kty": "AKP", "alg": alg, "pub": b64u(key.public_key().public_bytes_raw())}
    if private:
        jwk["priv"] = b64u(seed)
    return key, jwk


def thumbprint(jwk):
    members = {name: jwk[name] for name in ("alg", "kty", "pub")}
    return b64u(hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest())


def python_jwt(alg, key, claims, context=None, header_alg=None):
    header = b64u(json.dumps({"alg": header_alg or alg, "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64u(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode()
    signature = key.sign(signing_input, context) if context is not None else key.sign(signing_input)
    return f"{header}.{payload}.{b64u(signature)}"


def tokenmint_verifies(token, key_path):
    rc, out, err = cli("jwt", "verify", "--key", key_path, "--no-exp", token)
    return rc, out, err


# ---- A: keys ------------------------------------------------------------------

def a_keys(alg):
    seed = os.urandom(32)
    key, jwk = akp(alg, seed)
    path = write(f"a-{alg}.jwk", json.dumps(jwk))
    rc, out, err = cli("jwk", "public", path)
    expect(rc == 0, f"jwk public: exit {rc}: {err.strip()}")
    public = json.loads(out)
    expect(public.get("pub") == jwk["pub"] and "priv" not in public and public.get("alg") == alg and public.get("kty") == "AKP",
           f"public JWK {public}")
    rc, out, err = cli("jwk", "thumbprint", path)
    expect(rc == 0 and out.strip() == thumbprint(jwk), f"thumbprint {out.strip()!r}, Python's {thumbprint(jwk)!r}: {err.strip()}")
    # TokenMint's own key: Python expands its seed to the same pub.
    rc, out, err = cli("keygen", "--alg", alg, "--jwk")
    expect(rc == 0, f"keygen --jwk: exit {rc}: {err.strip()}")
    made = json.loads(out)
    again = SETS[alg].from_seed_bytes(b64d(made["priv"]))
    expect(b64u(again.public_key().public_bytes_raw()) == made["pub"], "TokenMint's pub is not the one its seed gives")
    expect(made.get("kid") == thumbprint(made), "keygen's kid is not the RFC 7638 thumbprint")


# ---- B: TokenMint signs ---------------------------------------------------------

def b_tokenmint_signs(alg):
    key, jwk = akp(alg, os.urandom(32))
    path = write(f"b-{alg}.jwk", json.dumps(jwk))
    rc, out, err = cli("jwt", "sign", "--key", path, "--sub", "pq-user", "--claims", '{"scope":"pay"}')
    expect(rc == 0, f"jwt sign: exit {rc}: {err.strip()}")
    token = out.strip()
    header_b64, payload_b64, signature_b64 = token.split(".")
    header = json.loads(b64d(header_b64))
    expect(header.get("alg") == alg, f"header {header}")
    expect(json.loads(b64d(payload_b64)) == {"scope": "pay", "sub": "pq-user"}, "claims")
    signing_input = f"{header_b64}.{payload_b64}".encode()
    signature = b64d(signature_b64)
    public = key.public_key()
    public.verify(signature, signing_input)  # raises InvalidSignature if wrong
    for what, data, context in (("under a context", signing_input, b"jose"), ("after a changed byte", signing_input[:-1] + b"x", None)):
        try:
            public.verify(signature, data, context) if context is not None else public.verify(signature, data)
        except InvalidSignature:
            continue
        raise Fail(f"cryptography accepted TokenMint's signature {what}")


# ---- C: cryptography signs --------------------------------------------------------

def c_python_signs(alg):
    key, jwk = akp(alg, os.urandom(32))
    public_path = write(f"c-{alg}.pub.jwk", json.dumps({k: v for k, v in jwk.items() if k != "priv"}))
    for claims in ({"sub": "a"}, {"sub": "b", "scope": "pay refund", "n": 7, "nested": {"x": [1, 2]}}):
        token = python_jwt(alg, key, claims)
        rc, out, err = tokenmint_verifies(token, public_path)
        expect(rc == 0, f"jwt verify: exit {rc}: {err.strip()}")
        expect(all(f'"{name}"' in out for name in claims), f"claims printed: {out.strip()}")


# ---- D: refusals -------------------------------------------------------------------

def d_refusals(alg):
    key, jwk = akp(alg, os.urandom(32))
    public_path = write(f"d-{alg}.pub.jwk", json.dumps({k: v for k, v in jwk.items() if k != "priv"}))
    good = python_jwt(alg, key, {"sub": "ok"})
    rc, _, err = tokenmint_verifies(good, public_path)
    expect(rc == 0, f"control: exit {rc}: {err.strip()}")
    refused = {
        "a signature made under a context": python_jwt(alg, key, {"sub": "ok"}, context=b"ctx"),
        "a changed payload": good.split(".")[0] + "." + b64u(b'{"sub":"evil"}') + "." + good.split(".")[2],
    }
    other = [a for a in SETS if a != alg][0]
    other_key, _ = akp(other, os.urandom(32))
    refused["signed by a key of another set, alg of this set"] = python_jwt(alg, other_key, {"sub": "ok"})
    refused["alg naming another set"] = python_jwt(alg, key, {"sub": "ok"}, header_alg=other)
    for what, token in refused.items():
        rc, _, err = tokenmint_verifies(token, public_path)
        expect(rc != 0, f"{what}: accepted")
        expect("Fatal error" not in err and "Program crashed" not in err, f"{what}: trap: {err[-300:]}")
    bad_keys = {
        "an AKP JWK without alg": {k: v for k, v in jwk.items() if k != "alg"},
        "a pub one byte short": {**jwk, "pub": b64u(b64d(jwk["pub"])[:-1])},
        "a priv that does not give its pub": {**jwk, "priv": b64u(os.urandom(32))},
        "alg ES256 on an AKP key": {**jwk, "alg": "ES256"},
    }
    for what, bad in bad_keys.items():
        path = write(f"d-{alg}-bad.jwk", json.dumps(bad))
        rc, _, err = cli("jwt", "sign", "--key", path, "--sub", "x")
        expect(rc != 0 and "Fatal error" not in err, f"{what}: signing with it gave exit {rc}")


def d_rfc_examples():
    for alg in SETS:
        with open(os.path.join(VECTORS, f"ML_DSA_{alg.split('-')[-1]}.jose.json")) as f:
            example = json.load(f)
        public = PUBLIC[alg].from_public_bytes(b64d(example["jwk"]["pub"]))
        header, payload, signature = example["jws"].split(".")
        public.verify(b64d(signature), f"{header}.{payload}".encode())
        seeded = SETS[alg].from_seed_bytes(b64d(example["jwk"]["priv"]))
        expect(seeded.public_key().public_bytes_raw() == b64d(example["jwk"]["pub"]), f"{alg}: the example's seed and pub disagree")
        expect(thumbprint(example["jwk"]) == example["jwk"]["kid"], f"{alg}: kid is not the thumbprint")


def main():
    rc, _, err = cli("keygen", "--alg", "ML-DSA-44", "--jwk")
    if rc != 0:
        checks.fail(f"the CLI cannot make ML-DSA keys (built without the MLDSA trait?): {err.strip()}")
        return checks.summary()
    for alg in SETS:
        checks.group(f"A {alg}: an AKP JWK from a Python seed: public JWK and thumbprint as Python computes; keygen's seed gives its pub",
                     a_keys, alg)
        checks.group(f"B {alg}: TokenMint signs a JWT, cryptography verifies it (not under a context, not changed)",
                     b_tokenmint_signs, alg)
        checks.group(f"C {alg}: cryptography signs JWTs, TokenMint verifies them and prints the claims", c_python_signs, alg)
        checks.group(f"D {alg}: refused: context, changed payload, another set's key or alg, AKP JWKs without alg, "
                     "short pub, foreign priv, alg ES256", d_refusals, alg)
    checks.group("D RFC 9964's example JWS and keys check out in cryptography too (seed -> pub, kid = thumbprint)", d_rfc_examples)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
