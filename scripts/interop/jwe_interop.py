#!/usr/bin/env python3
"""JWE interop checks (RFC 7516/7518) between the TokenMint CLI and Python
joserfc + jwcrypto.

Direction A (TokenMint -> Python): `tokenmint jwe encrypt` encrypts to keys
made in Python (the public JWK, or the oct key); joserfc and jwcrypto decrypt,
the plaintext comes back byte for byte and the protected header says what it
should (alg, enc, kid, cty; for ECDH-ES an epk on the right curve without "d").
Every alg (the ECDH-ES ones on P-256, P-384, P-521 and X25519) is used with at
least one enc, and every enc with dir and with A256KW.
Direction B (Python -> TokenMint): joserfc and jwcrypto encrypt the same cases
and `tokenmint jwe decrypt` with the private JWK gives the plaintext back.
C: the JSON serializations, flattened and general, both ways (a shared
unprotected header, per-recipient headers, aad, two recipients).
D: nested JWTs (a signed JWT inside a JWE with cty JWT), both ways.
E: refusals, exit 2 and no plaintext: changed tag, ciphertext, header or aad,
the wrong key, invalid-curve and small-order ephemeral keys, oct keys of the
wrong length, keys meant for signing, RSA1_5, "none", zip and crit.

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
Prints one line per check group and ends with `N passed, M failed`.
"""
import base64
import hashlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
import warnings

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe as jf_jwe
from joserfc import jwt as jf_jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey, import_key
from joserfc.jwt import JWTClaimsRegistry
from jwcrypto import jwe as jc_jwe
from jwcrypto import jwk as jc_jwk
from jwcrypto import jwt as jc_jwt

from tmcli import Checks, Fail, expect

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")

CURVES = ("P-256", "P-384", "P-521", "X25519")
COORD_BYTES = {"P-256": 32, "P-384": 48, "P-521": 66, "X25519": 32}
ENCS = ("A128GCM", "A192GCM", "A256GCM", "A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512")
CEK_BYTES = {"A128GCM": 16, "A192GCM": 24, "A256GCM": 32,
             "A128CBC-HS256": 32, "A192CBC-HS384": 48, "A256CBC-HS512": 64}
IV_BYTES = {enc: 12 if enc.endswith("GCM") else 16 for enc in ENCS}
TAG_BYTES = {enc: 16 if enc.endswith("GCM") else CEK_BYTES[enc] // 2 for enc in ENCS}
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth"}


def _cases():
    """(alg, enc, crv) for directions A and B: every alg with some enc, the
    ECDH-ES algs on every curve, and every enc with dir and with A256KW."""
    cases = [("RSA-OAEP", "A256GCM", None), ("RSA-OAEP", "A128CBC-HS256", None),
             ("RSA-OAEP-256", "A256GCM", None), ("RSA-OAEP-256", "A256CBC-HS512", None)]
    encs = itertools.cycle(ENCS)
    for crv in CURVES:
        for alg in ("ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW"):
            cases.append((alg, next(encs), crv))
    cases += [("A128KW", "A128GCM", None), ("A192KW", "A192CBC-HS384", None),
              ("A128GCMKW", "A128CBC-HS256", None), ("A192GCMKW", "A192GCM", None),
              ("A256GCMKW", "A256GCM", None)]
    cases += [("A256KW", enc, None) for enc in ENCS]
    cases += [("dir", enc, None) for enc in ENCS]
    return cases


CASES = _cases()
EMPTY_CASE = ("dir", "A128GCM", None)  # the one case whose plaintext is empty
PLAINTEXTS = [
    b'{"amount":"12.50","currency":"EUR","ref":"inv-2024-0042"}',
    "Zahlung über 12,50 € an Café Ünïcødé — 支付完成 ✓ 🔐".encode("utf-8"),
    bytes(range(256)) * 2,                      # NUL, CR, LF, 0xff: every byte value
    b"\n  leading and trailing whitespace\t\r\n",  # decrypt must not strip the plaintext
    b"x",
    os.urandom(4099),                           # random bytes, not a multiple of the block size
]

ISS = "https://issuer.tokenmint.test"
SUB = "user-1234"
AUD = "payments-api"
TTL = 300
LEEWAY = 5

checks = Checks()
_names = itertools.count()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_json(obj):
    return b64url(json.dumps(obj, separators=(",", ":")).encode("utf-8"))


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    return path


def write_bytes(tmp, stem, data):
    path = os.path.join(tmp, f"{stem}-{next(_names)}.bin")
    with open(path, "wb") as f:
        f.write(data)
    return path


def plaintext_for(i, case):
    return b"" if case == EMPTY_CASE else PLAINTEXTS[i % len(PLAINTEXTS)]


def short(data):
    return repr(data[:40]) + (f"… ({len(data)} bytes)" if len(data) > 40 else "")


def expect_plaintext(who, got, want):
    expect(got == want, f"{who} decrypts to {short(got)}, want {short(want)}")


def flip_char(segment):
    """Change one character in the middle of a base64url segment. (Not the
    last one: its low bits can be padding, which a lenient decoder ignores.)"""
    i = len(segment) // 2
    c = "A" if segment[i] != "A" else "B"
    return segment[:i] + c + segment[i + 1:]


def replace_part(token, index, value):
    parts = token.split(".")
    parts[index] = value
    return ".".join(parts)


def compact_header(token):
    return json.loads(b64d(token.split(".")[0]))


# ---- TokenMint CLI ---------------------------------------------------------

def tm(*args, stdin=b""):
    """Runs the CLI with bytes in and out (stdin is always given, never inherited)."""
    return subprocess.run([TOKENMINT, *args], input=stdin, capture_output=True, timeout=300)


def tail(p):
    err = p.stderr.decode("utf-8", "replace")
    return " | ".join(err.strip().splitlines()[-3:])[-400:]  # the end says what went wrong


def tm_ok(*args, stdin=b""):
    p = tm(*args, stdin=stdin)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p)}")
    return p.stdout


def tm_encrypt(tmp, key, alg, enc, plaintext, kid=None, cty=None, serialization=None, via_file=False):
    """`tokenmint jwe encrypt`; the plaintext from --in or stdin. Returns the
    JWE without the newline, which must be the only one."""
    args = ["jwe", "encrypt", "--key", key, "--alg", alg, "--enc", enc]
    if kid is not None:
        args += ["--kid", kid]
    if cty is not None:
        args += ["--cty", cty]
    if serialization is not None:
        args += ["--serialization", serialization]
    if via_file:
        out = tm_ok(*args, "--in", write_bytes(tmp, "pt", plaintext))
    else:
        out = tm_ok(*args, stdin=plaintext)
    expect(out.endswith(b"\n") and out.count(b"\n") == 1,
           f"jwe encrypt output is not one line ending in a newline: {out[:80]!r}")
    return out[:-1].decode("ascii")


def tm_decrypt(tmp, key, token, algs=(), encs=(), via_file=False):
    """`tokenmint jwe decrypt`: the process, stdout holding raw bytes."""
    args = ["jwe", "decrypt", "--key", key]
    for a in algs:
        args += ["--alg", a]
    for e in encs:
        args += ["--enc", e]
    data = token.encode("ascii") if isinstance(token, str) else token
    if via_file:
        return tm(*args, "--in", write_bytes(tmp, "jwe", data))
    return tm(*args, stdin=data)


def expect_decrypts(what, p, plaintext):
    expect(p.returncode == 0, f"{what}: exit {p.returncode}, want 0 ({tail(p)})")
    expect_plaintext(f"{what}: tokenmint", p.stdout, plaintext)


def expect_control(what, p, plaintext):
    """A refusal means something only if TokenMint reads the good version: the
    refusal checks below first have it decrypt (or encrypt) one."""
    expect_decrypts(f"control: {what}", p, plaintext)


def expect_refuses(what, p):
    expect(p.returncode == 2, f"{what}: exit {p.returncode}, want 2 (stdout {p.stdout[:60]!r}, {tail(p)})")
    expect(p.stderr.strip() != b"", f"{what}: exit 2 but nothing on stderr")
    expect(p.stdout == b"", f"{what}: refused, yet wrote {len(p.stdout)} bytes to stdout")


# ---- keys ------------------------------------------------------------------

def key_spec(alg, enc, crv):
    """What key an alg needs: 'RSA', a curve name, or ('oct', bytes)."""
    if alg.startswith("RSA"):
        return "RSA"
    if alg.startswith("ECDH-ES"):
        return crv
    if alg == "dir":
        return ("oct", CEK_BYTES[enc])
    return ("oct", int(alg[1:4]) // 8)  # A128KW, A192GCMKW, …


def generate(spec, lib):
    """A fresh private JWK (dict) for SPEC, made by joserfc or by jwcrypto."""
    if lib == "joserfc":
        if spec == "RSA":
            key = RSAKey.generate_key(2048, auto_kid=True)
        elif spec == "X25519":
            key = OKPKey.generate_key("X25519", auto_kid=True)
        elif spec in CURVES:
            key = ECKey.generate_key(spec, auto_kid=True)
        else:
            key = OctKey.generate_key(spec[1] * 8, auto_kid=True)
        return key.as_dict(private=True)
    if spec == "RSA":
        key = jc_jwk.JWK.generate(kty="RSA", size=2048)
    elif spec == "X25519":
        key = jc_jwk.JWK.generate(kty="OKP", crv="X25519")
    elif spec in CURVES:
        key = jc_jwk.JWK.generate(kty="EC", crv=spec)
    else:
        key = jc_jwk.JWK.generate(kty="oct", size=spec[1] * 8)
    return key.export(private_key=True, as_dict=True)


class KeyPool:
    """Python-made keys, one per (spec, library), made once (RSA keygen is the
    slow part) and written as JWK files for TokenMint: the private JWK, and
    the public one (for an oct key, the key itself)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.keys = {}

    def get(self, spec, lib="joserfc"):
        if (spec, lib) not in self.keys:
            jwk = generate(spec, lib)
            stem = os.path.join(self.tmp, f"key-{next(_names)}")
            priv = write_json(stem + ".jwk", jwk)
            pub = priv if jwk["kty"] == "oct" else write_json(stem + ".pub.jwk", public_jwk(jwk))
            self.keys[(spec, lib)] = (jwk, priv, pub)
        return self.keys[(spec, lib)]


def public_jwk(jwk):
    return {k: v for k, v in jwk.items() if k not in PRIVATE_MEMBERS}


def jf_key(jwk):
    return import_key(jwk)


def jc_key(jwk):
    return jc_jwk.JWK(**jwk)


# ---- Python side -----------------------------------------------------------

def jf_encrypt(header, plaintext, jwk, extra_algs=()):
    return jf_jwe.encrypt_compact(header, plaintext, jf_key(public_jwk(jwk)),
                                  algorithms=[header["alg"], header["enc"], *extra_algs])


def jc_encrypt(header, plaintext, jwk):
    return jc_jwe.JWE(plaintext, protected=header, recipient=jc_key(public_jwk(jwk))).serialize(compact=True)


def jf_decrypt(token, jwk, alg, enc, extra_algs=()):
    """joserfc, alg and enc pinned; a compact token or JSON text.
    Returns (merged header, plaintext)."""
    algorithms = [alg, enc, *extra_algs]
    try:
        if token.startswith("{"):
            obj = jf_jwe.decrypt_json(json.loads(token), jf_key(jwk), algorithms=algorithms)
            return obj.recipients[-1].headers(), obj.plaintext
        obj = jf_jwe.decrypt_compact(token, jf_key(jwk), algorithms=algorithms)
    except (JoseError, ValueError) as exc:
        raise Fail(f"joserfc rejects TokenMint's {alg}/{enc} JWE: {type(exc).__name__}: {exc}")
    return obj.headers(), obj.plaintext


def jc_decrypt(token, jwk, alg, enc):
    """jwcrypto, alg and enc pinned; a compact token or JSON text.
    Returns (merged header, plaintext)."""
    obj = jc_jwe.JWE(algs=[alg, enc])
    try:
        obj.deserialize(token)
        obj.decrypt(jc_key(jwk))
    except jc_jwe.InvalidJWEData as exc:
        # jwcrypto takes an empty plaintext for a failure ("if not self.plaintext"):
        # its log then says the one recipient decrypted
        if not (obj.plaintext == b"" and obj.decryptlog == ["Success"]):
            raise Fail(f"jwcrypto rejects TokenMint's {alg}/{enc} JWE: {exc}")
    except Exception as exc:  # jwcrypto raises assorted types
        raise Fail(f"jwcrypto rejects TokenMint's {alg}/{enc} JWE: {type(exc).__name__}: {exc}")
    header = obj.jose_header
    return (header[-1] if isinstance(header, list) else header), obj.plaintext


def check_header(header, alg, enc, crv, kid=None, cty=None):
    """The JOSE header of a JWE TokenMint made."""
    expect(header.get("alg") == alg, f"header alg is {header.get('alg')!r}, want {alg!r}")
    expect(header.get("enc") == enc, f"header enc is {header.get('enc')!r}, want {enc!r}")
    if kid is not None:
        expect(header.get("kid") == kid, f"header kid is {header.get('kid')!r}, want {kid!r}")
    if cty is not None:
        expect(header.get("cty") == cty, f"header cty is {header.get('cty')!r}, want {cty!r}")
    expect("zip" not in header, f"header has zip {header.get('zip')!r}")
    if alg.startswith("ECDH-ES"):
        epk = header.get("epk")
        expect(isinstance(epk, dict), f"ECDH-ES header has no epk object: {header}")
        leaked = sorted(PRIVATE_MEMBERS & set(epk))
        expect(not leaked, f"epk carries private members {leaked}")
        kty = "OKP" if crv == "X25519" else "EC"
        expect(epk.get("kty") == kty and epk.get("crv") == crv,
               f"epk is kty {epk.get('kty')!r} crv {epk.get('crv')!r}, want {kty} {crv}")
        for m in ("x",) if kty == "OKP" else ("x", "y"):
            expect(len(b64d(epk.get(m, ""))) == COORD_BYTES[crv],
                   f"epk {m} is {len(b64d(epk.get(m, '')))} bytes, want {COORD_BYTES[crv]}")
        import_key(epk)  # a point on the curve, or joserfc (cryptography) says no
    else:
        expect("epk" not in header, "epk in a header whose alg is not ECDH-ES")
    if "GCMKW" in alg:
        expect(len(b64d(header.get("iv", ""))) == 12, f"{alg} header iv is not 96 bits: {header.get('iv')!r}")
        expect(len(b64d(header.get("tag", ""))) == 16, f"{alg} header tag is not 128 bits: {header.get('tag')!r}")


def check_sizes(alg, enc, ek, iv, tag):
    """Encrypted key, IV and tag lengths as RFC 7518 fixes them."""
    if alg in ("dir", "ECDH-ES"):
        want = 0
    elif alg.startswith("RSA"):
        want = 256  # the 2048-bit keys used here
    elif "GCMKW" in alg:
        want = CEK_BYTES[enc]
    else:
        want = CEK_BYTES[enc] + 8  # AES key wrap adds one 64-bit block
    expect(len(ek) == want, f"encrypted key is {len(ek)} bytes, want {want}")
    expect(len(iv) == IV_BYTES[enc], f"IV is {len(iv)} bytes, want {IV_BYTES[enc]}")
    expect(len(tag) == TAG_BYTES[enc], f"tag is {len(tag)} bytes, want {TAG_BYTES[enc]}")


# ---- hand-made JWEs --------------------------------------------------------

def concat_kdf(z, alg_id, nbytes, apu=b"", apv=b""):
    """RFC 7518 §4.6.2: Concat KDF with SHA-256."""
    def lp(b):
        return len(b).to_bytes(4, "big") + b
    other = lp(alg_id.encode("ascii")) + lp(apu) + lp(apv) + (nbytes * 8).to_bytes(4, "big")
    out = b""
    for counter in range(1, -(-nbytes // 32) + 1):
        out += hashlib.sha256(counter.to_bytes(4, "big") + z + other).digest()
    return out[:nbytes]


def hand_jwe(header, cek, plaintext, ek=b""):
    """A compact JWE with an AES-GCM enc, built without a JOSE library."""
    protected = b64url_json(header)
    iv = os.urandom(12)
    sealed = AESGCM(cek).encrypt(iv, plaintext, protected.encode("ascii"))
    return ".".join([protected, b64url(ek), b64url(iv), b64url(sealed[:-16]), b64url(sealed[-16:])])


def ecdh_es_jwe(epk, z, plaintext, enc="A128GCM"):
    """ECDH-ES (direct) with a chosen epk and the shared secret Z that goes with it."""
    cek = concat_kdf(z, enc, CEK_BYTES[enc])
    return hand_jwe({"alg": "ECDH-ES", "enc": enc, "epk": epk}, cek, plaintext)


def ec_public_jwk(crv, x, y):
    n = COORD_BYTES[crv]
    return {"kty": "EC", "crv": crv, "x": b64url(x.to_bytes(n, "big")), "y": b64url(y.to_bytes(n, "big"))}


# ---- A: TokenMint encrypts, Python decrypts --------------------------------

def check_a(i, case, pool, tmp):
    """tokenmint jwe encrypt to a Python key; joserfc and jwcrypto decrypt."""
    alg, enc, crv = case
    jwk, _, pub_path = pool.get(key_spec(*case), "joserfc" if i % 2 else "jwcrypto")
    plaintext = plaintext_for(i, case)
    kid = f"recipient-{i}-ä" if i % 3 == 0 else None
    cty = "application/json" if i % 4 == 1 else None
    token = tm_encrypt(tmp, pub_path, alg, enc, plaintext, kid=kid, cty=cty, via_file=i % 2 == 0)
    parts = token.split(".")
    expect(len(parts) == 5, f"jwe encrypt output is not a compact JWE: {token[:80]!r}")
    header = compact_header(token)
    # without --kid, the key's kid (if it has one) names it
    check_header(header, alg, enc, crv, kid=kid if kid is not None else jwk.get("kid"), cty=cty)
    check_sizes(alg, enc, b64d(parts[1]), b64d(parts[2]), b64d(parts[4]))
    jf_header, got = jf_decrypt(token, jwk, alg, enc)
    expect_plaintext("joserfc", got, plaintext)
    _, got = jc_decrypt(token, jwk, alg, enc)
    expect_plaintext("jwcrypto", got, plaintext)


# ---- B: Python encrypts, TokenMint decrypts --------------------------------

def check_b(lib, i, case, pool, tmp):
    """joserfc or jwcrypto encrypts to its own key; tokenmint jwe decrypt with the private JWK."""
    alg, enc, crv = case
    jwk, priv_path, _ = pool.get(key_spec(*case), lib)
    plaintext = plaintext_for(i, case)
    header = {"alg": alg, "enc": enc}
    if i % 3 == 0:
        header["kid"] = f"{lib}-{i}"
    if i % 4 == 1:
        header["cty"] = "application/json"
    token = (jf_encrypt if lib == "joserfc" else jc_encrypt)(header, plaintext, jwk)
    if i % 2:
        token = f"\n  {token} \r\n"  # surrounding whitespace is ignored
    pinned = ([alg], [enc]) if i % 3 == 1 else ((), ())
    p = tm_decrypt(tmp, priv_path, token, *pinned, via_file=i % 4 < 2)
    expect_decrypts(f"{lib}'s {alg}/{enc} JWE", p, plaintext)


# ---- C: JSON serializations ------------------------------------------------

C_TM_CASES = [("A128KW", "A128GCM", None), ("RSA-OAEP-256", "A256CBC-HS512", None),
              ("ECDH-ES", "A256GCM", "P-256"), ("ECDH-ES+A256KW", "A128CBC-HS256", "X25519"),
              ("A256GCMKW", "A192GCM", None), ("dir", "A256GCM", None)]


def json_headers(obj):
    """The JOSE header of a one-recipient JSON JWE: protected, unprotected and
    per-recipient members merged (RFC 7516 §7.2.1), with the parts checked."""
    rec = obj["recipients"][0] if "recipients" in obj else obj
    protected = json.loads(b64d(obj["protected"])) if "protected" in obj else {}
    shared, own = obj.get("unprotected", {}), rec.get("header", {})
    names = list(protected) + list(shared) + list(own)
    expect(len(names) == len(set(names)), f"a header member appears twice: {sorted(names)}")
    return protected | shared | own, b64d(rec.get("encrypted_key", ""))


def check_c_tm(shape, case, pool, tmp):
    """tokenmint jwe encrypt --serialization flattened|general; jwcrypto and
    joserfc decrypt, and so does TokenMint itself."""
    alg, enc, crv = case
    jwk, priv_path, pub_path = pool.get(key_spec(*case))
    plaintext = PLAINTEXTS[1]
    kid = f"{shape}-{alg}"
    text = tm_encrypt(tmp, pub_path, alg, enc, plaintext, kid=kid, serialization=shape)
    try:
        obj = json.loads(text)
    except ValueError:
        raise Fail(f"--serialization {shape} output is not JSON: {text[:80]!r}")
    for m in ("protected", "iv", "ciphertext", "tag"):
        expect(m in obj, f"{shape} JWE has no {m!r}: {sorted(obj)}")
    if shape == "flattened":
        expect("recipients" not in obj, "flattened JWE has recipients")
    else:
        expect(isinstance(obj.get("recipients"), list) and len(obj["recipients"]) == 1,
               f"general JWE recipients is {obj.get('recipients')!r}, want a list of one")
        expect(not {"encrypted_key", "header"} & set(obj), "general JWE has encrypted_key or header at the top")
    for where in [obj] + obj.get("recipients", []):
        empty = sorted(m for m, v in where.items() if v in ("", {}))
        expect(not empty, f"members {empty} are empty; RFC 7516 §7.2.1 wants them absent")
    header, ek = json_headers(obj)
    protected = json.loads(b64d(obj["protected"]))
    expect(protected.get("enc") == enc, f"enc {protected.get('enc')!r} is not in the protected header")
    check_header(header, alg, enc, crv, kid=kid)
    check_sizes(alg, enc, ek, b64d(obj["iv"]), b64d(obj["tag"]))
    _, got = jc_decrypt(text, jwk, alg, enc)
    expect_plaintext("jwcrypto", got, plaintext)
    _, got = jf_decrypt(text, jwk, alg, enc)
    expect_plaintext("joserfc", got, plaintext)
    expect_decrypts("tokenmint, its own JSON", tm_decrypt(tmp, priv_path, text), plaintext)


def py_json(lib, shape, recipients, protected, unprotected, aad, plaintext):
    """A JSON JWE made by LIB. RECIPIENTS: (per-recipient header or None, JWK)."""
    if lib == "joserfc":
        cls = jf_jwe.FlattenedJSONEncryption if shape == "flattened" else jf_jwe.GeneralJSONEncryption
        obj = cls(protected, plaintext, unprotected, aad)
        algorithms = {protected["enc"]}
        for header, jwk in recipients:
            # The key without its kid: joserfc copies a key's kid into the recipient's
            # header even when the shared header has one (RFC 7516 §7.2.1 wants the
            # three disjoint). And {} for no header: joserfc needs one.
            obj.add_recipient(header or {}, jf_key({k: v for k, v in public_jwk(jwk).items() if k != "kid"}))
            algorithms.add((header or protected)["alg"])
        data = jf_jwe.encrypt_json(obj, None, algorithms=sorted(algorithms))
        # joserfc writes "header": {} and "encrypted_key": "" where RFC 7516 §7.2.1
        # says such members MUST be absent; they are not authenticated, so drop them
        for rec in data.get("recipients", [data]):
            for m in ("header", "encrypted_key"):
                if not rec.get(m, True):
                    del rec[m]
        return json.dumps(data)
    obj = jc_jwe.JWE(plaintext, protected=protected, unprotected=unprotected, aad=aad,
                     flattened=shape == "flattened")
    for header, jwk in recipients:
        obj.add_recipient(jc_key(public_jwk(jwk)), header=header)
    return obj.serialize()


def check_c_py(lib, shape, layout, case, pool, tmp):
    """joserfc or jwcrypto JSON serialization; tokenmint jwe decrypt.
    layout "protected": alg and enc protected, kid in the shared unprotected header;
    "recipient": only enc protected, alg and kid in the per-recipient header."""
    alg, enc, crv = case
    jwk, priv_path, _ = pool.get(key_spec(*case), lib)
    plaintext = PLAINTEXTS[2]
    aad = "aad: Zahlungsreferenz ü €".encode("utf-8")
    if layout == "protected":
        recipients = [(None, jwk)]
        protected, unprotected = {"alg": alg, "enc": enc}, {"kid": f"{lib}-shared"}
    else:
        recipients = [({"alg": alg, "kid": f"{lib}-own"}, jwk)]
        protected, unprotected = {"enc": enc}, {"cty": "application/octet-stream"}
    text = py_json(lib, shape, recipients, protected, unprotected, aad, plaintext)
    obj = json.loads(text)
    expect(("recipients" in obj) == (shape == "general"), f"{lib} made no {shape} JWE: {sorted(obj)}")
    expect("aad" in obj and "unprotected" in obj, f"{lib}'s JWE lacks aad or unprotected: {sorted(obj)}")
    expect_decrypts(f"{lib} {shape} JSON", tm_decrypt(tmp, priv_path, text, via_file=shape == "general"), plaintext)
    # aad is authenticated: another aad must be refused
    obj["aad"] = b64url(aad + b"!")
    expect_refuses(f"{lib} {shape} JSON, aad changed", tm_decrypt(tmp, priv_path, json.dumps(obj)))


def check_c_two_recipients(lib, pool, tmp):
    """A general JWE for two recipients (another oct key first, ours second,
    each named by its key's kid): TokenMint decrypts with its key."""
    other, _, _ = pool.get(("oct", 16), lib)
    jwk, priv_path, _ = pool.get("RSA", lib)
    plaintext = PLAINTEXTS[0]
    recipients = [({"alg": "A128KW", "kid": "someone-else"}, other),
                  ({"alg": "RSA-OAEP-256", "kid": jwk.get("kid", "us")}, jwk)]
    text = py_json(lib, "general", recipients, {"enc": "A128CBC-HS256"}, None, None, plaintext)
    expect(len(json.loads(text)["recipients"]) == 2, f"{lib} made no two recipients")
    expect_decrypts(f"{lib} general JSON, two recipients", tm_decrypt(tmp, priv_path, text), plaintext)


# ---- D: nested JWTs --------------------------------------------------------

def claims_for(**extra):
    now = int(time.time())
    claims = {"iss": ISS, "sub": SUB, "aud": AUD, "iat": now, "exp": now + TTL, "jti": str(uuid.uuid4())}
    claims.update(extra)
    return claims


def tm_verify_jwt(token, key):
    """tokenmint jwt verify; returns the claims it printed."""
    p = tm("jwt", "verify", "--key", key, "--iss", ISS, "--aud", AUD, token)
    expect(p.returncode == 0, f"tokenmint jwt verify of the inner JWT: exit {p.returncode}, want 0 ({tail(p)})")
    return json.loads(p.stdout)


def check_d_tm(pool, tmp):
    """tokenmint jwt sign (ES256), then jwe encrypt --cty JWT (ECDH-ES+A256KW on
    P-256); joserfc decrypts and verifies the inner JWT, jwcrypto too."""
    sig_path = os.path.join(tmp, "d-es256.jwk")
    tm_ok("keygen", "--alg", "ES256", "--jwk", "--out", sig_path)
    sig_public = json.loads(tm_ok("jwk", "public", sig_path))
    jti = str(uuid.uuid4())
    inner = tm_ok("jwt", "sign", "--key", sig_path, "--alg", "ES256", "--claims", json.dumps({"jti": jti}),
                  "--ttl", str(TTL), "--iss", ISS, "--sub", SUB, "--aud", AUD).decode("ascii").strip()
    jwk, _, pub_path = pool.get("P-256")
    token = tm_encrypt(tmp, pub_path, "ECDH-ES+A256KW", "A256GCM", inner.encode("ascii"), cty="JWT")
    header, got = jf_decrypt(token, jwk, "ECDH-ES+A256KW", "A256GCM")
    expect(header.get("cty") == "JWT", f"outer header cty is {header.get('cty')!r}, want 'JWT'")
    expect(got == inner.encode("ascii"), "joserfc's plaintext is not the signed JWT")
    try:
        tok = jf_jwt.decode(got, import_key(sig_public), algorithms=["ES256"])
        JWTClaimsRegistry(leeway=LEEWAY, iss={"essential": True, "value": ISS},
                          aud={"essential": True, "value": AUD}, exp={"essential": True}).validate(tok.claims)
    except (JoseError, ValueError) as exc:
        raise Fail(f"joserfc rejects the inner JWT: {type(exc).__name__}: {exc}")
    expect(tok.claims.get("jti") == jti and tok.claims.get("sub") == SUB, f"inner claims {tok.claims}")
    _, got = jc_decrypt(token, jwk, "ECDH-ES+A256KW", "A256GCM")
    try:
        inner_jc = jc_jwt.JWT(jwt=got.decode("ascii"), key=jc_key(sig_public), algs=["ES256"])
    except Exception as exc:
        raise Fail(f"jwcrypto rejects the inner JWT: {type(exc).__name__}: {exc}")
    expect(json.loads(inner_jc.claims).get("jti") == jti, "jwcrypto reads another jti")


def check_d_joserfc(pool, tmp):
    """joserfc signs (EdDSA) and encrypts (RSA-OAEP-256, cty JWT); tokenmint
    jwe decrypt, then tokenmint jwt verify of the inner JWT."""
    sig = OKPKey.generate_key("Ed25519", auto_kid=True)
    sig_path = write_json(os.path.join(tmp, "d-ed25519.pub.jwk"), sig.as_dict(private=False))
    claims = claims_for()
    inner = jf_jwt.encode({"alg": "EdDSA", "typ": "JWT", "kid": sig.kid}, claims, sig, algorithms=["EdDSA"])
    jwk, priv_path, _ = pool.get("RSA")
    token = jf_encrypt({"alg": "RSA-OAEP-256", "enc": "A256GCM", "cty": "JWT"}, inner.encode("ascii"), jwk)
    p = tm_decrypt(tmp, priv_path, token)
    expect_decrypts("joserfc's nested JWT", p, inner.encode("ascii"))
    got = tm_verify_jwt(p.stdout.decode("ascii"), sig_path)
    expect(got == claims, f"jwt verify printed {got}, want {claims}")


def check_d_jwcrypto(pool, tmp):
    """jwcrypto signs (PS256) and encrypts (A256KW, A256CBC-HS512, cty JWT);
    tokenmint jwe decrypt, then tokenmint jwt verify of the inner JWT."""
    sig = jc_jwk.JWK.generate(kty="RSA", size=2048)
    sig_path = write_json(os.path.join(tmp, "d-ps256.pub.jwk"), sig.export_public(as_dict=True))
    claims = claims_for()
    inner = jc_jwt.JWT(header={"alg": "PS256", "typ": "JWT"}, claims=claims)
    inner.make_signed_token(sig)
    inner = inner.serialize()
    jwk, priv_path, _ = pool.get(("oct", 32), "jwcrypto")
    token = jc_encrypt({"alg": "A256KW", "enc": "A256CBC-HS512", "cty": "JWT"}, inner.encode("ascii"), jwk)
    p = tm_decrypt(tmp, priv_path, token)
    expect_decrypts("jwcrypto's nested JWT", p, inner.encode("ascii"))
    got = tm_verify_jwt(p.stdout.decode("ascii"), sig_path)
    expect(got == claims, f"jwt verify printed {got}, want {claims}")


# ---- E: refusals -----------------------------------------------------------

def check_e_tamper(what, alg, enc, crv, pool, tmp):
    """A good JWE (jwcrypto's), decrypted once, then with one part changed."""
    jwk, priv_path, _ = pool.get(key_spec(alg, enc, crv), "jwcrypto")
    plaintext = PLAINTEXTS[0]
    token = jc_encrypt({"alg": alg, "enc": enc}, plaintext, jwk)
    expect_decrypts("control: the JWE as made", tm_decrypt(tmp, priv_path, token), plaintext)
    parts = token.split(".")
    if what == "tag changed":
        bad = replace_part(token, 4, flip_char(parts[4]))
    elif what == "tag cut to 8 bytes":
        bad = replace_part(token, 4, b64url(b64d(parts[4])[:8]))
    elif what == "ciphertext changed":
        bad = replace_part(token, 3, flip_char(parts[3]))
    elif what == "encrypted key changed":
        bad = replace_part(token, 1, flip_char(parts[1]))
    elif what == "iv changed":
        bad = replace_part(token, 2, flip_char(parts[2]))
    else:  # the protected header: same alg and enc, one member more, so only the AAD differs
        bad = replace_part(token, 0, b64url_json(compact_header(token) | {"kid": "inserted"}))
    expect_refuses(f"{alg}/{enc}, {what}", tm_decrypt(tmp, priv_path, bad))


def check_e_wrong_key(spec, alg, enc, pool, tmp):
    """Encrypted by joserfc to one key, decrypted by TokenMint with another of the same kind."""
    jwk, path, _ = pool.get(spec, "joserfc")
    _, other_path, _ = pool.get(spec, "jwcrypto")
    token = jf_encrypt({"alg": alg, "enc": enc}, PLAINTEXTS[0], jwk)
    expect_control("the right key", tm_decrypt(tmp, path, token), PLAINTEXTS[0])
    expect_refuses(f"{alg} JWE, another {spec} key", tm_decrypt(tmp, other_path, token))


def ec_key_with_odd_scalar():
    while True:
        key = ec.generate_private_key(ec.SECP256R1())
        if key.private_numbers().private_value % 2:
            return key


def check_e_invalid_curve(tmp):
    """ECDH-ES, P-256 key: an epk that is not on P-256. The point (x, 0) is on
    y² = x³ − 3x + b′ with b′ = 3x − x³, where it has order 2; formulas that
    never use b compute d·(x, 0) = (x, 0) for odd d, so an implementation that
    skips the on-curve check derives Z = x and this JWE decrypts. A control
    with an honest epk (same hand-made construction) must decrypt."""
    key = ec_key_with_odd_scalar()
    nums = key.private_numbers()
    jwk = ec_public_jwk("P-256", nums.public_numbers.x, nums.public_numbers.y)
    jwk["d"] = b64url(nums.private_value.to_bytes(32, "big"))
    path = write_json(os.path.join(tmp, f"e-curve-{next(_names)}.jwk"), jwk)
    plaintext = b"invalid-curve probe"
    eph = ec.generate_private_key(ec.SECP256R1())
    epk_nums = eph.public_key().public_numbers()
    honest = ecdh_es_jwe(ec_public_jwk("P-256", epk_nums.x, epk_nums.y), eph.exchange(ec.ECDH(), key.public_key()),
                         plaintext)
    _, got = jf_decrypt(honest, jwk, "ECDH-ES", "A128GCM")  # the construction is right…
    expect_plaintext("joserfc, control", got, plaintext)
    expect_control("honest epk", tm_decrypt(tmp, path, honest), plaintext)  # …and TokenMint reads it
    p = 2**256 - 2**224 + 2**192 + 2**96 - 1
    b = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
    x = int.from_bytes(os.urandom(32), "big") % p
    expect((x**3 - 3 * x + b) % p != 0, "(x, 0) happens to be on P-256")
    bad = ecdh_es_jwe(ec_public_jwk("P-256", x, 0), x.to_bytes(32, "big"), plaintext)
    expect_refuses("epk (x, 0) off P-256, order 2 on a twist", tm_decrypt(tmp, path, bad))
    # a point that is on no curve with this x at all: y changed by one
    y = (epk_nums.y + 1) % p
    bad = ecdh_es_jwe(ec_public_jwk("P-256", epk_nums.x, y), eph.exchange(ec.ECDH(), key.public_key()), plaintext)
    expect_refuses("epk with y + 1", tm_decrypt(tmp, path, bad))


def check_e_cross_curve(tmp):
    """ECDH-ES, P-256 key, epk a valid P-384 point: an implementation that
    multiplies the epk's curve by the recipient's scalar would derive this Z."""
    key = ec.generate_private_key(ec.SECP256R1())
    nums = key.private_numbers()
    jwk = ec_public_jwk("P-256", nums.public_numbers.x, nums.public_numbers.y)
    jwk["d"] = b64url(nums.private_value.to_bytes(32, "big"))
    path = write_json(os.path.join(tmp, f"e-cross-{next(_names)}.jwk"), jwk)
    honest = ec.generate_private_key(ec.SECP256R1())
    e = honest.public_key().public_numbers()
    good = ecdh_es_jwe(ec_public_jwk("P-256", e.x, e.y), honest.exchange(ec.ECDH(), key.public_key()), b"probe")
    expect_control("an honest P-256 epk", tm_decrypt(tmp, path, good), b"probe")
    eph = ec.generate_private_key(ec.SECP384R1())
    z = ec.derive_private_key(nums.private_value, ec.SECP384R1()).exchange(ec.ECDH(), eph.public_key())
    e = eph.public_key().public_numbers()
    bad = ecdh_es_jwe(ec_public_jwk("P-384", e.x, e.y), z, b"cross-curve probe")
    expect_refuses("P-384 epk for a P-256 key", tm_decrypt(tmp, path, bad))


def check_e_x25519_small_order(pool, tmp):
    """ECDH-ES, X25519 key, epk u = 0 (small order): the shared secret is all
    zero whatever the key, so this JWE decrypts where that is not refused."""
    jwk, path, _ = pool.get("X25519")
    eph = x25519.X25519PrivateKey.generate()
    raw = eph.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    z = eph.exchange(x25519.X25519PublicKey.from_public_bytes(b64d(jwk["x"])))
    good = ecdh_es_jwe({"kty": "OKP", "crv": "X25519", "x": b64url(raw)}, z, b"probe")
    expect_control("an honest X25519 epk, same construction", tm_decrypt(tmp, path, good), b"probe")
    bad = ecdh_es_jwe({"kty": "OKP", "crv": "X25519", "x": b64url(bytes(32))}, bytes(32), b"small-order probe")
    expect_refuses("X25519 epk of small order", tm_decrypt(tmp, path, bad))


def check_e_key_length(alg, enc, have, give, tmp):
    """An oct key of the wrong length: made with HAVE bytes, TokenMint given
    GIVE bytes (a longer key starts with the right one, so truncating would work)."""
    k = os.urandom(max(have, give))
    token = jf_encrypt({"alg": alg, "enc": enc}, PLAINTEXTS[0], {"kty": "oct", "k": b64url(k[:have])})
    right = write_json(os.path.join(tmp, f"e-len-{next(_names)}.jwk"), {"kty": "oct", "k": b64url(k[:have])})
    expect_control(f"the {have}-byte key", tm_decrypt(tmp, right, token), PLAINTEXTS[0])
    path = write_json(os.path.join(tmp, f"e-len-{next(_names)}.jwk"), {"kty": "oct", "k": b64url(k[:give])})
    expect_refuses(f"{alg}/{enc} JWE, {give}-byte oct key", tm_decrypt(tmp, path, token))


def check_e_key_meant_for(jwk_extra, alg, enc, spec, pool, tmp):
    """The right key, but its JWK says it is for something else ("use": "sig",
    an "alg" of another kind): refused. Control: the same key without the member."""
    jwk, priv_path, _ = pool.get(spec)
    token = jf_encrypt({"alg": alg, "enc": enc}, PLAINTEXTS[0], jwk)
    expect_control("the key without that member", tm_decrypt(tmp, priv_path, token), PLAINTEXTS[0])
    path = write_json(os.path.join(tmp, f"e-meant-{next(_names)}.jwk"), jwk | jwk_extra)
    expect_refuses(f"{alg} JWE, key with {jwk_extra}", tm_decrypt(tmp, path, token))


def check_e_restrict(pool, tmp):
    """--alg/--enc restrict what decrypt accepts; so does the key's own alg."""
    jwk, priv_path, _ = pool.get("RSA")
    token = jf_encrypt({"alg": "RSA-OAEP-256", "enc": "A256GCM"}, PLAINTEXTS[0], jwk)
    expect_refuses("--alg RSA-OAEP for an RSA-OAEP-256 JWE", tm_decrypt(tmp, priv_path, token, ["RSA-OAEP"]))
    expect_refuses("--enc A128GCM for an A256GCM JWE", tm_decrypt(tmp, priv_path, token, (), ["A128GCM"]))
    expect_decrypts("--alg RSA-OAEP --alg RSA-OAEP-256 --enc A256GCM",
                    tm_decrypt(tmp, priv_path, token, ["RSA-OAEP", "RSA-OAEP-256"], ["A256GCM"]), PLAINTEXTS[0])
    pinned = write_json(os.path.join(tmp, "e-rsa-oaep.jwk"), jwk | {"alg": "RSA-OAEP", "use": "enc"})
    expect_refuses("key alg RSA-OAEP, JWE alg RSA-OAEP-256", tm_decrypt(tmp, pinned, token))
    pinned = write_json(os.path.join(tmp, "e-rsa-oaep-256.jwk"), jwk | {"alg": "RSA-OAEP-256", "use": "enc"})
    expect_decrypts("key alg RSA-OAEP-256, use enc", tm_decrypt(tmp, pinned, token), PLAINTEXTS[0])


def check_e_rsa1_5(pool, tmp):
    """RSA1_5 (PKCS #1 v1.5, Bleichenbacher) is not supported at all."""
    jwk, priv_path, pub_path = pool.get("RSA")
    token = jf_encrypt({"alg": "RSA1_5", "enc": "A128GCM"}, PLAINTEXTS[0], jwk)
    _, got = jc_decrypt(token, jwk, "RSA1_5", "A128GCM")  # a genuine RSA1_5 JWE
    expect_plaintext("jwcrypto, control", got, PLAINTEXTS[0])
    good = jf_encrypt({"alg": "RSA-OAEP", "enc": "A128GCM"}, PLAINTEXTS[0], jwk)
    expect_control("RSA-OAEP with the same key", tm_decrypt(tmp, priv_path, good), PLAINTEXTS[0])
    expect_refuses("RSA1_5 JWE", tm_decrypt(tmp, priv_path, token))
    expect_refuses("RSA1_5 JWE, --alg RSA1_5", tm_decrypt(tmp, priv_path, token, ["RSA1_5"]))
    expect_refuses("jwe encrypt --alg RSA1_5", tm("jwe", "encrypt", "--key", pub_path, "--alg", "RSA1_5",
                                                  "--enc", "A128GCM", stdin=b"x"))


def check_e_none(pool, tmp):
    """alg "none" (any spelling), with an oct key and with an RSA key."""
    oct_jwk, oct_path, _ = pool.get(("oct", 16))
    _, rsa_path, _ = pool.get("RSA")
    good = jf_encrypt({"alg": "A128KW", "enc": "A128GCM"}, PLAINTEXTS[0], oct_jwk)
    expect_control("A128KW with the oct key", tm_decrypt(tmp, oct_path, good), PLAINTEXTS[0])
    for spelling in ("none", "None", "NONE"):
        header = b64url_json({"alg": spelling, "enc": "A128GCM"})
        for body in (f"{header}..{b64url(os.urandom(12))}.{b64url(b'hello')}.",
                     f"{header}..{b64url(os.urandom(12))}.{b64url(b'hello')}.{b64url(os.urandom(16))}",
                     f"{header}...{b64url(b'hello')}."):
            expect_refuses(f"alg {spelling!r}, oct key", tm_decrypt(tmp, oct_path, body))
            expect_refuses(f"alg {spelling!r}, RSA key", tm_decrypt(tmp, rsa_path, body))


def check_e_zip(pool, tmp):
    """zip DEF: TokenMint does not decompress, so it refuses (control: both
    libraries read the JWE)."""
    jwk, priv_path, _ = pool.get(("oct", 16))
    plaintext = b"compress me " * 40
    token = jf_encrypt({"alg": "A128KW", "enc": "A128GCM", "zip": "DEF"}, plaintext, jwk, extra_algs=["DEF"])
    _, got = jc_decrypt(token, jwk, "A128KW", "A128GCM")
    expect_plaintext("jwcrypto, control", got, plaintext)
    good = jf_encrypt({"alg": "A128KW", "enc": "A128GCM"}, plaintext, jwk)
    expect_control("the same without zip", tm_decrypt(tmp, priv_path, good), plaintext)
    expect_refuses("zip DEF", tm_decrypt(tmp, priv_path, token))


def check_e_crit(pool, tmp):
    """A crit extension TokenMint does not know (RFC 7516 §4.1.13), dir A128GCM by hand."""
    jwk, priv_path, _ = pool.get(("oct", 16))
    header = {"alg": "dir", "enc": "A128GCM", "crit": ["exp-x"], "exp-x": 1}
    token = hand_jwe(header, b64d(jwk["k"]), PLAINTEXTS[0])
    expect_refuses("crit [\"exp-x\"]", tm_decrypt(tmp, priv_path, token))
    control = hand_jwe({"alg": "dir", "enc": "A128GCM"}, b64d(jwk["k"]), PLAINTEXTS[0])
    expect_control("the same by hand without crit", tm_decrypt(tmp, priv_path, control), PLAINTEXTS[0])


def check_e_rsa_small(pool, tmp):
    """An RSA key under 2048 bits: refused for decrypting and for encrypting to."""
    # joserfc will neither make nor use such a key; jwcrypto takes one from cryptography
    jwk = jc_jwk.JWK.from_pyca(rsa.generate_private_key(65537, 1024)).export(private_key=True, as_dict=True)
    path = write_json(os.path.join(tmp, "e-rsa1024.jwk"), jwk)
    pub = write_json(os.path.join(tmp, "e-rsa1024.pub.jwk"), public_jwk(jwk))
    token = jc_encrypt({"alg": "RSA-OAEP", "enc": "A128GCM"}, PLAINTEXTS[0], jwk)
    big, big_path, big_pub = pool.get("RSA", "jwcrypto")
    good = tm_encrypt(tmp, big_pub, "RSA-OAEP", "A128GCM", PLAINTEXTS[0])
    expect_control("a 2048-bit key, encrypt and decrypt", tm_decrypt(tmp, big_path, good), PLAINTEXTS[0])
    expect_refuses("RSA-OAEP JWE, 1024-bit key", tm_decrypt(tmp, path, token))
    expect_refuses("jwe encrypt to a 1024-bit key", tm("jwe", "encrypt", "--key", pub, "--alg", "RSA-OAEP",
                                                       "--enc", "A128GCM", stdin=b"x"))


def check_e_encrypt(pool, tmp):
    """jwe encrypt refuses keys that do not fit the alg or the enc."""
    def refuses(what, key, alg, enc, *extra):
        expect_refuses(what, tm("jwe", "encrypt", "--key", key, "--alg", alg, "--enc", enc, *extra, stdin=b"x"))
    _, _, rsa_pub = pool.get("RSA")
    _, _, p256_pub = pool.get("P-256")
    _, oct16, _ = pool.get(("oct", 16))
    oct32_jwk, oct32, _ = pool.get(("oct", 32))
    good = tm_encrypt(tmp, oct32, "A256KW", "A128GCM", b"x")
    _, got = jf_decrypt(good, oct32_jwk, "A256KW", "A128GCM")
    expect_plaintext("control: joserfc", got, b"x")
    refuses("ECDH-ES to an RSA key", rsa_pub, "ECDH-ES", "A128GCM")
    refuses("RSA-OAEP to an EC key", p256_pub, "RSA-OAEP", "A128GCM")
    refuses("A128KW with an EC key", p256_pub, "A128KW", "A128GCM")
    refuses("dir A256GCM with a 16-byte key", oct16, "dir", "A256GCM")
    refuses("dir A128GCM with a 32-byte key", oct32, "dir", "A128GCM")
    refuses("A128KW with a 32-byte key", oct32, "A128KW", "A128GCM")
    refuses("A256GCMKW with a 16-byte key", oct16, "A256GCMKW", "A128GCM")
    refuses("alg none", oct16, "none", "A128GCM")
    refuses("unknown enc", oct16, "A128KW", "A128CTR")
    refuses("--serialization json", oct16, "A128KW", "A128GCM", "--serialization", "json")
    jwk, _, _ = pool.get("RSA")
    sig = write_json(os.path.join(tmp, "e-enc-sig.pub.jwk"), public_jwk(jwk) | {"use": "sig"})
    refuses("RSA-OAEP to a key with use sig", sig, "RSA-OAEP", "A128GCM")
    pinned = write_json(os.path.join(tmp, "e-enc-alg.pub.jwk"), public_jwk(jwk) | {"alg": "RSA-OAEP-256"})
    refuses("RSA-OAEP to a key whose alg is RSA-OAEP-256", pinned, "RSA-OAEP", "A128GCM")
    p = tm("jwe", "encrypt", "--alg", "A128KW", "--enc", "A128GCM", stdin=b"x")
    expect(p.returncode == 2, f"jwe encrypt without --key: exit {p.returncode}, want 2")


def check_e_garbage(pool, tmp):
    """Input that is no JWE at all."""
    jwk, path, _ = pool.get(("oct", 16))
    good = jf_encrypt({"alg": "A128KW", "enc": "A128GCM"}, PLAINTEXTS[0], jwk)
    expect_control("a JWE", tm_decrypt(tmp, path, good), PLAINTEXTS[0])
    for what, data in [("empty input", b""), ("a JWS", b"eyJhbGciOiJIUzI1NiJ9.e30.c2ln"),
                       ("four parts", b"a.b.c.d"), ("six parts", b"a.b.c.d.e.f"),
                       ("not base64url", b"!!.??.**.&&.%%"), ("JSON without ciphertext", b'{"protected":"e30"}'),
                       ("binary", os.urandom(64))]:
        expect_refuses(what, tm_decrypt(tmp, path, data))


def main():
    warnings.simplefilter("ignore")  # joserfc's SecurityWarning (RSA1_5), small-key warnings
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory(prefix="tokenmint-jwe-interop-") as tmp:
        pool = KeyPool(tmp)
        print("# A: TokenMint -> joserfc, jwcrypto")
        for i, case in enumerate(CASES):
            alg, enc, crv = case
            checks.group(f"A {alg} {enc}{' ' + crv if crv else ''} jwe encrypt", check_a, i, case, pool, tmp)
        print("# B: joserfc, jwcrypto -> TokenMint")
        for lib in ("joserfc", "jwcrypto"):
            for i, case in enumerate(CASES):
                alg, enc, crv = case
                checks.group(f"B {lib} {alg} {enc}{' ' + crv if crv else ''} jwe decrypt",
                             check_b, lib, i, case, pool, tmp)
        print("# C: JSON serializations")
        for shape in ("flattened", "general"):
            for case in C_TM_CASES:
                alg, enc, crv = case
                checks.group(f"C tokenmint {shape} {alg} {enc}{' ' + crv if crv else ''} -> jwcrypto, joserfc",
                             check_c_tm, shape, case, pool, tmp)
        for lib in ("joserfc", "jwcrypto"):
            for shape in ("flattened", "general"):
                for layout, case in (("protected", ("A128KW", "A128GCM", None)),
                                     ("recipient", ("RSA-OAEP", "A192CBC-HS384", None)),
                                     ("recipient", ("A128GCMKW", "A256GCM", None)),
                                     ("protected", ("ECDH-ES+A128KW", "A128CBC-HS256", "P-384"))):
                    alg, enc, crv = case
                    checks.group(f"C {lib} {shape} {alg} {enc}{' ' + crv if crv else ''}, alg in the {layout} "
                                 "header, aad -> tokenmint", check_c_py, lib, shape, layout, case, pool, tmp)
            checks.group(f"C {lib} general, two recipients -> tokenmint", check_c_two_recipients, lib, pool, tmp)
        print("# D: nested JWTs (cty JWT)")
        checks.group("D tokenmint jwt sign + jwe encrypt -> joserfc, jwcrypto", check_d_tm, pool, tmp)
        checks.group("D joserfc sign + encrypt -> tokenmint jwe decrypt + jwt verify", check_d_joserfc, pool, tmp)
        checks.group("D jwcrypto sign + encrypt -> tokenmint jwe decrypt + jwt verify", check_d_jwcrypto, pool, tmp)
        print("# E: refusals (exit 2, no plaintext)")
        for what in ("tag changed", "tag cut to 8 bytes", "ciphertext changed", "iv changed",
                     "protected header changed"):
            for alg, enc, crv in (("A128KW", "A128GCM", None), ("dir", "A128CBC-HS256", None),
                                  ("ECDH-ES", "A256GCM", "P-256")):
                checks.group(f"E {what}, {alg} {enc}", check_e_tamper, what, alg, enc, crv, pool, tmp)
        checks.group("E encrypted key changed, RSA-OAEP", check_e_tamper, "encrypted key changed", "RSA-OAEP",
                     "A256GCM", None, pool, tmp)
        for spec, alg, enc in (("RSA", "RSA-OAEP-256", "A128GCM"), ("P-256", "ECDH-ES", "A128GCM"),
                               ("X25519", "ECDH-ES+A128KW", "A256GCM"), (("oct", 16), "A128KW", "A128GCM"),
                               (("oct", 32), "A256GCMKW", "A256GCM"), (("oct", 32), "dir", "A256GCM")):
            checks.group(f"E wrong key, {alg} {enc}", check_e_wrong_key, spec, alg, enc, pool, tmp)
        checks.group("E ECDH-ES epk not on P-256 (invalid-curve attack)", check_e_invalid_curve, tmp)
        checks.group("E ECDH-ES epk on P-384 for a P-256 key", check_e_cross_curve, tmp)
        checks.group("E ECDH-ES X25519 epk of small order", check_e_x25519_small_order, pool, tmp)
        for alg, enc, have, give in (("dir", "A128GCM", 16, 32), ("dir", "A128CBC-HS256", 32, 64),
                                     ("dir", "A256GCM", 32, 16), ("A128KW", "A128GCM", 16, 32)):
            checks.group(f"E {alg} {enc}, oct key of {give} bytes, not {have}", check_e_key_length,
                         alg, enc, have, give, tmp)
        checks.group('E RSA-OAEP with a key whose JWK says "use": "sig"', check_e_key_meant_for,
                     {"use": "sig"}, "RSA-OAEP", "A128GCM", "RSA", pool, tmp)
        checks.group('E ECDH-ES with a key whose JWK says "alg": "ES256"', check_e_key_meant_for,
                     {"alg": "ES256"}, "ECDH-ES", "A128GCM", "P-256", pool, tmp)
        checks.group('E A128KW with a key whose JWK says "use": "sig"', check_e_key_meant_for,
                     {"use": "sig"}, "A128KW", "A128GCM", ("oct", 16), pool, tmp)
        checks.group("E --alg / --enc and the key's alg restrict decrypt", check_e_restrict, pool, tmp)
        checks.group("E RSA1_5 is not supported", check_e_rsa1_5, pool, tmp)
        checks.group('E alg "none"', check_e_none, pool, tmp)
        checks.group('E zip "DEF"', check_e_zip, pool, tmp)
        checks.group("E unknown crit extension", check_e_crit, pool, tmp)
        checks.group("E RSA key under 2048 bits", check_e_rsa_small, pool, tmp)
        checks.group("E jwe encrypt refuses keys that do not fit", check_e_encrypt, pool, tmp)
        checks.group("E input that is no JWE", check_e_garbage, pool, tmp)

    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
