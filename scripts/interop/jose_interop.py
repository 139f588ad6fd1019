#!/usr/bin/env python3
"""JWT interop checks between the TokenMint CLI and Python joserfc + PyJWT.

Direction A (TokenMint -> Python): keys made by `tokenmint keygen --jwk` and
tokens made by `tokenmint jwt sign` are verified by joserfc and by PyJWT, and
TokenMint signs with keys that joserfc made (as PEM).
Direction B (Python -> TokenMint): keys and tokens made by joserfc are checked
with `tokenmint jwt verify`, which must accept the good ones and refuse a
flipped signature, an expired token and a token for another audience.
C: RFC 7638 thumbprints agree both ways. D: `--jwks` picks the key by kid.
E: algorithm confusion (HS256 keyed with an RSA public key) and `alg: none`
are refused. F: claim rules (audience lists, `exp` required, --now, --leeway).

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
Prints one line per check group and ends with `N passed, M failed`.
"""
import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
import warnings

import jwt as pyjwt
from joserfc import jws as jf_jws
from joserfc import jwt as jf_jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey, import_key
from joserfc.jwt import JWTClaimsRegistry

from tmcli import Checks, Fail, expect

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
ALGS = ["EdDSA", "Ed25519", "Ed448", "ES256", "ES384", "ES512", "ES256K", "RS256", "RS384", "RS512",
        "PS256", "PS384", "PS512", "HS256", "HS384", "HS512"]
CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521", "ES256K": "secp256k1"}
EDDSA = ("EdDSA", "Ed25519")  # RFC 9864's fully-specified name beside the polymorphic one
HMAC_HASHES = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}
PUBLIC_MEMBERS = {"OKP": ("kty", "crv", "x"), "EC": ("kty", "crv", "x", "y"),
                  "RSA": ("kty", "n", "e"), "oct": ("kty", "k")}

ISS = "https://issuer.tokenmint.test"
SUB = "user-1234"
AUD = "payments-api"
AZP = "checkout-web"
SCOPE = "pay refund"
TTL = 300
LEEWAY = 5  # seconds of clock slack for the Python verifiers (iat is "now")

checks = Checks()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_json(obj):
    return b64url(json.dumps(obj, separators=(",", ":")).encode("utf-8"))


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    return path


def flip_signature_char(token):
    """Change one character in the middle of the signature segment. (Not the
    last one: its low bits can be padding, which a lenient decoder ignores.)"""
    head, payload, sig = token.split(".")
    i = len(sig) // 2
    c = "A" if sig[i] != "A" else "B"
    return f"{head}.{payload}.{sig[:i]}{c}{sig[i + 1:]}"


def claims_for(aud=AUD, now=None, ttl=TTL, **extra):
    now = int(time.time()) if now is None else now
    claims = {"iss": ISS, "sub": SUB, "aud": aud, "iat": now, "exp": now + ttl,
              "jti": str(uuid.uuid4()), "azp": AZP, "scope": SCOPE}
    claims.update(extra)
    return {k: v for k, v in claims.items() if v is not None}


# ---- TokenMint CLI ---------------------------------------------------------

def tm(*args):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True, timeout=300)


def tail(p):
    return " | ".join(p.stderr.strip().splitlines()[-3:])[-400:]  # the end says what went wrong


def tm_ok(*args):
    p = tm(*args)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p)}")
    return p.stdout.strip()


def tm_verify(token, key=None, jwks=None, aud=AUD, iss=ISS, extra=()):
    args = ["jwt", "verify"]
    args += ["--key", key] if key else ["--jwks", jwks]
    if iss is not None:
        args += ["--iss", iss]
    if aud is not None:
        args += ["--aud", aud]
    return tm(*args, *extra, token)


def expect_accepts(what, p, claims=None):
    expect(p.returncode == 0, f"{what}: exit {p.returncode}, want 0 ({tail(p)})")
    try:
        printed = json.loads(p.stdout)
    except ValueError:
        raise Fail(f"{what}: stdout is not the claims JSON: {p.stdout[:120]!r}")
    if claims is not None:
        expect(printed == claims, f"{what}: printed claims {printed} differ from the token's {claims}")


def expect_refuses(what, p):
    expect(p.returncode == 1, f"{what}: exit {p.returncode}, want 1 (stdout {p.stdout[:80]!r})")
    expect(p.stderr.strip() != "", f"{what}: exit 1 but nothing on stderr")


# ---- Python side -----------------------------------------------------------

def jf_generate(alg, kid=None):
    """A joserfc private key for ALG (Ed25519, P-256/384/521, RSA 2048, or an
    oct key as long as the hash) with a kid (its thumbprint unless given)."""
    if alg in EDDSA:
        key = OKPKey.generate_key("Ed25519", auto_kid=kid is None)
    elif alg == "Ed448":
        key = OKPKey.generate_key("Ed448", auto_kid=kid is None)
    elif alg in CURVES:
        key = ECKey.generate_key(CURVES[alg], auto_kid=kid is None)
    elif alg[:2] in ("RS", "PS"):
        key = RSAKey.generate_key(2048, auto_kid=kid is None)
    else:
        key = OctKey.generate_key(int(alg[2:]), auto_kid=kid is None)  # bits: 32/48/64 bytes
    if kid is not None:
        key = import_key(key.as_dict(private=True) | {"kid": kid})
    return key


def jf_sign(alg, key, claims, kid=None, header_extra=None):
    header = {"alg": alg, "typ": "JWT"}
    kid = kid if kid is not None else key.kid
    if kid is not None:
        header["kid"] = kid
    header.update(header_extra or {})
    return jf_jwt.encode(header, claims, key, algorithms=[alg])


def jf_verify(alg, token, public_jwk):
    """joserfc: signature with the JWK and the alg pinned, then iss/aud/exp."""
    try:
        tok = jf_jwt.decode(token, import_key(public_jwk), algorithms=[alg])
        JWTClaimsRegistry(leeway=LEEWAY, iss={"essential": True, "value": ISS},
                          aud={"essential": True, "value": AUD},
                          exp={"essential": True}).validate(tok.claims)
    except (JoseError, ValueError) as exc:
        raise Fail(f"joserfc rejects TokenMint's {alg} token: {type(exc).__name__}: {exc}")
    return tok.header, tok.claims


def pyjwt_verify(alg, token, public_jwk):
    if alg not in pyjwt.algorithms.get_default_algorithms():
        # PyJWT has no RFC 9864 names (nor, in some versions, ES256K): joserfc alone verifies.
        return jf_verify(alg, token, public_jwk)[1]
    try:
        return pyjwt.decode(token, pyjwt.PyJWK(public_jwk, algorithm=alg), algorithms=[alg],
                            audience=AUD, issuer=ISS, leeway=LEEWAY,
                            options={"require": ["exp", "iss", "aud", "sub"]})
    except (pyjwt.PyJWTError, ValueError) as exc:
        raise Fail(f"PyJWT rejects TokenMint's {alg} token: {type(exc).__name__}: {exc}")


def check_jwk_shape(alg, jwk, private):
    kty = jwk.get("kty")
    want = ("OKP" if alg in EDDSA or alg == "Ed448" else "EC" if alg in CURVES else
            "RSA" if alg[:2] in ("RS", "PS") else "oct")
    expect(kty == want, f"kty is {kty!r}, want {want!r}")
    if kty == "OKP":
        crv = "Ed448" if alg == "Ed448" else "Ed25519"
        expect(jwk.get("crv") == crv, f"crv is {jwk.get('crv')!r}, want {crv!r}")
    if kty == "EC":
        expect(jwk.get("crv") == CURVES[alg], f"crv is {jwk.get('crv')!r}, want {CURVES[alg]!r}")
    missing = [m for m in PUBLIC_MEMBERS[kty] if m not in jwk]
    expect(not missing, f"JWK lacks {missing}")
    if kty == "oct":
        k = base64.urlsafe_b64decode(jwk["k"] + "=" * (-len(jwk["k"]) % 4))
        expect(len(k) >= int(alg[2:]) // 8, f"{alg} key is {len(k)} bytes, shorter than the hash")
    elif private:
        expect("d" in jwk, "private JWK has no 'd'")
    else:
        leaked = sorted(PRIVATE_MEMBERS & set(jwk))
        expect(not leaked, f"public JWK carries private members {leaked}")


# ---- check groups ----------------------------------------------------------

def check_a(alg, tmp, state):
    """TokenMint keygen --jwk and jwt sign; joserfc and PyJWT verify."""
    path = os.path.join(tmp, f"a-{alg}.jwk")
    tm_ok("keygen", "--alg", alg, "--jwk", "--out", path)
    with open(path, encoding="utf-8") as f:
        priv = json.load(f)
    check_jwk_shape(alg, priv, private=True)
    state[alg] = path
    if alg.startswith("HS"):
        public = priv  # a MAC key verifies as itself
    else:
        public = json.loads(tm_ok("jwk", "public", path))
        check_jwk_shape(alg, public, private=False)
        for m in PUBLIC_MEMBERS[public["kty"]]:
            expect(public[m] == priv[m], f"`jwk public` {m} differs from the private JWK's")
    kid = priv.get("kid") or "tm-" + alg
    jti = str(uuid.uuid4())
    token = tm_ok("jwt", "sign", "--key", path, "--alg", alg, f"--kid={kid}", "--typ", "JWT",
                  "--claims", json.dumps({"jti": jti, "scope": SCOPE}), "--ttl", str(TTL),
                  "--iss", ISS, "--sub", SUB, "--aud", AUD, "--azp", AZP)
    expect(token.count(".") == 2, f"jwt sign output is not a compact JWS: {token[:80]!r}")
    header, claims = jf_verify(alg, token, public)
    expect(header.get("alg") == alg, f"header alg is {header.get('alg')!r}")
    expect(header.get("kid") == kid, f"header kid is {header.get('kid')!r}, want {kid!r}")
    expect(header.get("typ") == "JWT", f"header typ is {header.get('typ')!r}")
    want = {"iss": ISS, "sub": SUB, "azp": AZP, "jti": jti, "scope": SCOPE}
    for name, value in want.items():
        expect(claims.get(name) == value, f"claim {name} is {claims.get(name)!r}, want {value!r}")
    expect(claims.get("aud") in (AUD, [AUD]), f"claim aud is {claims.get('aud')!r}, want {AUD!r}")
    for name in ("iat", "exp"):
        expect(isinstance(claims.get(name), int), f"claim {name} is {claims.get(name)!r}, want an integer")
    expect(claims["exp"] - claims["iat"] == TTL, f"exp - iat is {claims['exp'] - claims['iat']}, want {TTL}")
    expect(abs(claims["iat"] - time.time()) < 120, f"iat {claims['iat']} is not now")
    expect(pyjwt_verify(alg, token, public) == claims, "PyJWT and joserfc decode different claims")
    decoded = tm_ok("jwt", "decode", token)
    expect(alg in decoded and jti in decoded, "`jwt decode` does not show the header alg and the jti")
    # and the token must survive TokenMint's own verifier with the public half
    pub_path = path if alg.startswith("HS") else write_json(os.path.join(tmp, f"a-{alg}.pub.jwk"), public)
    expect_accepts("tokenmint verifies its own token", tm_verify(token, key=pub_path), claims)


def check_a_pem(alg, tmp):
    """TokenMint signs with a joserfc key given as a PKCS#8 PEM; joserfc verifies."""
    key = jf_generate(alg)
    path = os.path.join(tmp, f"a-pem-{alg}.pem")
    with open(path, "wb") as f:
        f.write(key.as_pem(private=True))
    token = tm_ok("jwt", "sign", "--key", path, "--alg", alg,
                  "--claims", json.dumps({"jti": str(uuid.uuid4()), "scope": SCOPE}),
                  "--ttl", str(TTL), "--iss", ISS, "--sub", SUB, "--aud", AUD, "--azp", AZP)
    public = key.as_dict(private=False)
    jf_verify(alg, token, public)
    pyjwt_verify(alg, token, public)


def check_b(alg, tmp):
    """joserfc key and tokens; tokenmint jwt verify accepts and refuses."""
    key = jf_generate(alg)
    expect(key.kid, "joserfc key has no kid")
    priv_path = write_json(os.path.join(tmp, f"b-{alg}.jwk"), key.as_dict(private=True))
    # a MAC key has no public half: TokenMint gets the oct key itself
    pub_path = (priv_path if alg.startswith("HS") else
                write_json(os.path.join(tmp, f"b-{alg}.pub.jwk"), key.as_dict(private=False)))

    claims = claims_for()
    token = jf_sign(alg, key, claims)
    expect_accepts("valid token", tm_verify(token, key=pub_path, extra=["--azp", AZP]), claims)
    if not alg.startswith("HS"):
        expect_accepts("valid token, private JWK as key", tm_verify(token, key=priv_path), claims)
    expect_refuses("one signature character changed", tm_verify(flip_signature_char(token), key=pub_path))
    now = int(time.time())
    expired = jf_sign(alg, key, claims_for(now=now - 7200, ttl=3600))
    expect_refuses("exp an hour in the past", tm_verify(expired, key=pub_path))
    other = jf_sign(alg, key, claims_for(aud="another-api"))
    expect_refuses("token for another audience", tm_verify(other, key=pub_path))
    expect_refuses("token with aud, verified without --aud", tm_verify(token, key=pub_path, aud=None))
    expect_refuses("wrong --iss", tm_verify(token, key=pub_path, iss="https://evil.test"))


def check_c(alg, tmp, state):
    """RFC 7638 thumbprints: TokenMint's equal joserfc's, both ways."""
    key = jf_generate(alg)
    priv_path = write_json(os.path.join(tmp, f"c-{alg}.jwk"), key.as_dict(private=True))
    want = key.thumbprint()
    got = tm_ok("jwk", "thumbprint", priv_path)
    expect(got == want, f"thumbprint of joserfc's private key: TokenMint {got}, joserfc {want}")
    if not alg.startswith("HS"):
        pub_path = write_json(os.path.join(tmp, f"c-{alg}.pub.jwk"), key.as_dict(private=False))
        got = tm_ok("jwk", "thumbprint", pub_path)
        expect(got == want, f"thumbprint of joserfc's public key: TokenMint {got}, joserfc {want}")
        public = json.loads(tm_ok("jwk", "public", priv_path))
        check_jwk_shape(alg, public, private=False)
        for m in PUBLIC_MEMBERS[public["kty"]]:
            expect(public[m] == key.as_dict(private=False)[m], f"`jwk public` {m} differs from joserfc's")
    # the other way: a TokenMint key (made in group A, or here if A did not get that far)
    path = state.get(alg)
    if path is None or not os.path.exists(path):
        path = os.path.join(tmp, f"c-tm-{alg}.jwk")
        tm_ok("keygen", "--alg", alg, "--jwk", "--out", path)
    with open(path, encoding="utf-8") as f:
        tm_jwk = json.load(f)
    by_joserfc = import_key(tm_jwk).thumbprint()
    got = tm_ok("jwk", "thumbprint", path)
    expect(got == by_joserfc, f"thumbprint of TokenMint's key: TokenMint {got}, joserfc {by_joserfc}")
    expect(tm_jwk.get("kid") == by_joserfc,
           f"keygen kid {tm_jwk.get('kid')!r} is not the RFC 7638 thumbprint {by_joserfc}")
    if alg in ("RS384", "RS512", "PS384", "PS512"):
        return  # big RSA keygen is slow; RS256/PS256 cover --kid for RSA
    # --kid overrides the thumbprint
    path = os.path.join(tmp, f"c-tm-{alg}-kid.jwk")
    tm_ok("keygen", "--alg", alg, "--jwk", "--kid", "key-2024-01", "--out", path)
    with open(path, encoding="utf-8") as f:
        expect(json.load(f).get("kid") == "key-2024-01", "keygen --kid is not the JWK's kid")


def check_d(name, algs, tmp):
    """A JWKS of two joserfc keys: verify picks the key the token's kid names."""
    keys = [jf_generate(alg, kid=f"{name}-{i}") for i, alg in enumerate(algs)]
    path = write_json(os.path.join(tmp, f"d-{name}.jwks"),
                      {"keys": [k.as_dict(private=False) for k in keys]})
    for alg, key in zip(algs, keys):
        claims = claims_for()
        expect_accepts(f"token with kid {key.kid}", tm_verify(jf_sign(alg, key, claims), jwks=path), claims)
    alg0, key0 = algs[0], keys[0]
    expect_refuses("unknown kid", tm_verify(jf_sign(alg0, key0, claims_for(), kid="no-such-key"), jwks=path))
    if algs[0] == algs[1]:
        # same alg, so only the kid tells them apart: key 1's signature under key 0's kid
        wrong = jf_sign(algs[1], keys[1], claims_for(), kid=key0.kid)
        expect_refuses("kid of key 0 on a token signed by key 1", tm_verify(wrong, jwks=path))


def check_e_confusion(tmp):
    """HS256 keyed with the bytes of the RSA public key must not pass as RS256."""
    key = jf_generate("RS256")
    pub = key.as_dict(private=False)
    pub_path = write_json(os.path.join(tmp, "e-rsa.pub.jwk"), pub)
    jwks_path = write_json(os.path.join(tmp, "e-rsa.jwks"), {"keys": [pub]})
    claims = claims_for()
    expect_accepts("control: the genuine RS256 token", tm_verify(jf_sign("RS256", key, claims), key=pub_path), claims)
    with open(pub_path, "rb") as f:
        jwk_bytes = f.read()
    secrets = {"public key PEM": key.as_pem(private=False),
               "public JWK file bytes": jwk_bytes,
               "modulus bytes": base64.urlsafe_b64decode(pub["n"] + "=" * (-len(pub["n"]) % 4))}
    for what, secret in secrets.items():
        signing_input = b64url_json({"alg": "HS256", "typ": "JWT", "kid": key.kid}) + "." + b64url_json(claims)
        mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
        forged = signing_input + "." + b64url(mac)
        expect_refuses(f"HS256 keyed with the {what}, --key", tm_verify(forged, key=pub_path))
        expect_refuses(f"HS256 keyed with the {what}, --jwks", tm_verify(forged, jwks=jwks_path))


def check_e_none(tmp):
    """Unsecured tokens (alg none, any spelling, empty or junk signature) are refused."""
    rsa_key = jf_generate("RS256")
    rsa_path = write_json(os.path.join(tmp, "e-none-rsa.pub.jwk"), rsa_key.as_dict(private=False))
    oct_key = jf_generate("HS256")
    oct_path = write_json(os.path.join(tmp, "e-none-oct.jwk"), oct_key.as_dict(private=True))
    jwks_path = write_json(os.path.join(tmp, "e-none.jwks"), {"keys": [rsa_key.as_dict(private=False)]})
    claims = b64url_json(claims_for())
    for spelling in ("none", "None", "NONE", "nOnE"):
        for kid in (None, rsa_key.kid):
            header = {"alg": spelling, "typ": "JWT"} | ({"kid": kid} if kid else {})
            unsecured = b64url_json(header) + "." + claims
            for token in (unsecured + ".", unsecured + "." + b64url(b"\0" * 32)):
                label = f"alg {spelling!r}{' with kid' if kid else ''}"
                expect_refuses(f"{label}, --key RSA", tm_verify(token, key=rsa_path))
                expect_refuses(f"{label}, --key oct", tm_verify(token, key=oct_path))
                expect_refuses(f"{label}, --jwks", tm_verify(token, jwks=jwks_path))


def check_f(tmp):
    """Claim rules: audience lists, exp required, --now and --leeway."""
    key = jf_generate("ES256")
    path = write_json(os.path.join(tmp, "f.pub.jwk"), key.as_dict(private=False))
    claims = claims_for(aud=["ledger-api", AUD])
    token = jf_sign("ES256", key, claims)
    expect_accepts("aud list naming --aud second", tm_verify(token, key=path), claims)
    expect_accepts("aud list naming --aud first", tm_verify(token, key=path, aud="ledger-api"), claims)
    expect_refuses("aud list not naming --aud", tm_verify(token, key=path, aud="other-api"))

    no_exp = claims_for(exp=None)
    expect_refuses("token without exp", tm_verify(jf_sign("ES256", key, no_exp), key=path))

    claims = claims_for()
    token = jf_sign("ES256", key, claims)
    exp = claims["exp"]
    expect_accepts("--now before exp", tm_verify(token, key=path, extra=["--now", str(exp - 10)]), claims)
    expect_refuses("--now 30 s after exp", tm_verify(token, key=path, extra=["--now", str(exp + 30)]))
    expect_accepts("--now 30 s after exp, --leeway 60",
                   tm_verify(token, key=path, extra=["--now", str(exp + 30), "--leeway", "60"]), claims)
    expect_refuses("--now 90 s after exp, --leeway 60",
                   tm_verify(token, key=path, extra=["--now", str(exp + 90), "--leeway", "60"]))


def check_usage(tmp):
    """Usage errors exit 2."""
    key = jf_generate("ES256")
    path = write_json(os.path.join(tmp, "u.pub.jwk"), key.as_dict(private=False))
    token = jf_sign("ES256", key, claims_for())
    p = tm("jwt", "verify", "--iss", ISS, "--aud", AUD, token)
    expect(p.returncode == 2, f"jwt verify with neither --key nor --jwks: exit {p.returncode}, want 2")
    p = tm("jwt", "verify", "--key", path, "--iss", ISS, "--aud", AUD)
    expect(p.returncode == 2, f"jwt verify without a token: exit {p.returncode}, want 2")



def check_g_dpop(alg, tmp):
    """DPoP (RFC 9449) both ways: TokenMint's proof read by joserfc with the
    header's jwk; joserfc's proof checked by `tokenmint dpop verify`."""
    url = "https://api.tokenmint.test/v1/pay"
    state = os.path.join(tmp, f"g-{alg}-state")
    path = os.path.join(tmp, f"g-{alg}.jwk")
    tm_ok("keygen", "--alg", alg, "--jwk", "--out", path)
    # Base64url values may start with "-": the access token and nonce here do, so the CLI must take them as values.
    proof = tm_ok("dpop", "proof", "--key", path, "--method", "POST", "--url", url + "?amount=5",
                  "--access-token", "-AT-1", "--nonce", "-n0nce")
    header = jf_jws.extract_compact(proof.encode()).protected
    expect(header.get("typ") == "dpop+jwt" and header.get("alg") == alg, f"header {header}")
    expect(not (PRIVATE_MEMBERS & set(header.get("jwk", {}))), "the proof's jwk carries private members")
    key = import_key(header["jwk"])
    claims = json.loads(jf_jws.deserialize_compact(proof, key, algorithms=[alg]).payload)
    want_ath = b64url(hashlib.sha256(b"-AT-1").digest())
    expect(claims.get("htm") == "POST" and claims.get("htu") == url and claims.get("ath") == want_ath
           and claims.get("nonce") == "-n0nce"
           and isinstance(claims.get("jti"), str) and abs(claims.get("iat", 0) - time.time()) < 120, f"claims {claims}")
    # joserfc makes a proof; TokenMint checks it, binds it to joserfc's thumbprint, and takes it once.
    own = jf_generate(alg)
    body = {"jti": str(uuid.uuid4()), "htm": "GET", "htu": url, "iat": int(time.time()), "ath": want_ath}
    jf_header = {"typ": "dpop+jwt", "alg": alg, "jwk": own.as_dict(private=False)}
    theirs = jf_jws.serialize_compact(jf_header, json.dumps(body).encode(), own, algorithms=[alg])
    out = json.loads(tm_ok("dpop", "verify", theirs, "--method", "GET", "--url", "https://API.tokenmint.test:443/v1/pay",
                           "--access-token", "-AT-1", "--jkt", own.thumbprint(), "--store", state))
    expect(out.get("jkt") == own.thumbprint() and out.get("jti") == body["jti"], f"dpop verify printed {out}")
    again = tm("dpop", "verify", theirs, "--method", "GET", "--url", url, "--access-token", "-AT-1", "--store", state)
    expect(again.returncode == 2 and "replayed" in again.stderr, f"the same jti twice: exit {again.returncode}, {tail(again)}")
    other = dict(body, jti=str(uuid.uuid4()), htm="POST")
    wrong = jf_jws.serialize_compact(jf_header, json.dumps(other).encode(), own, algorithms=[alg])
    refused = tm("dpop", "verify", wrong, "--method", "GET", "--url", url, "--store", state)
    expect(refused.returncode == 2, f"a proof for POST accepted for GET: exit {refused.returncode}")


def main():
    warnings.simplefilter("ignore")  # joserfc's SecurityWarning (EdDSA, HS*), PyJWT key-length warnings
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory(prefix="tokenmint-jose-interop-") as tmp:
        made = {}  # alg -> path of the JWK TokenMint generated in group A
        print("# A: TokenMint -> joserfc, PyJWT")
        for alg in ALGS:
            checks.group(f"A {alg} keygen --jwk, jwt sign", check_a, alg, tmp, made)
        for alg in ALGS:
            if not alg.startswith("HS"):
                checks.group(f"A {alg} jwt sign with a PEM key", check_a_pem, alg, tmp)
        print("# B: joserfc -> TokenMint")
        for alg in ALGS:
            checks.group(f"B {alg} jwt verify", check_b, alg, tmp)
        print("# C: RFC 7638 thumbprints")
        for alg in ALGS:
            checks.group(f"C {alg} jwk thumbprint", check_c, alg, tmp, made)
        print("# D: JWKS key selection by kid")
        checks.group("D jwks ES256 + ES256", check_d, "es", ["ES256", "ES256"], tmp)
        checks.group("D jwks RS256 + EdDSA", check_d, "mixed", ["RS256", "EdDSA"], tmp)
        print("# E: algorithm confusion and unsecured tokens")
        checks.group("E HS256 keyed with an RSA public key", check_e_confusion, tmp)
        checks.group("E alg none", check_e_none, tmp)
        print("# F: claim rules and usage errors")
        checks.group("F aud lists, exp required, --now, --leeway", check_f, tmp)
        checks.group("F usage errors exit 2", check_usage, tmp)
        print("# G: DPoP proofs (RFC 9449), both ways")
        for alg in ("ES256", "ES384", "EdDSA", "ES256K"):  # RSA jwk headers exceed joserfc's 512-byte header limit
            checks.group(f"G {alg} dpop proof / verify", check_g_dpop, alg, tmp)

    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
