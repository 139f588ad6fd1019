#!/usr/bin/env python3
"""SD-JWT interop checks (RFC 9901, and SD-JWT VC with typ dc+sd-jwt) between
the TokenMint CLI and the IETF reference implementation (PyPI `sd-jwt`,
import name sd_jwt: SDJWTIssuer, SDJWTHolder, SDJWTVerifier, keys as jwcrypto
JWKs), both directions.

A (TokenMint issues -> reference holder and verifier): `tokenmint sdjwt issue`
with EdDSA, ES256, ES384, ES512, PS256 and RS256 issuer keys; flat claims,
nested objects with recursive disclosure, array elements (scalars, objects,
arrays in arrays), odd member names and value types, decoys, a holder key
(cnf), typ and vct. The issuance itself is checked by hand (one digest per
disclosure, the decoys, nothing selectively disclosable left in the clear),
the reference verifier reads the full issuance, and the reference holder
presents subsets, with and without a KB-JWT, which the reference verifier
reads back as exactly the claims expected.
B (TokenMint presents -> reference verifier): `tokenmint sdjwt present` keeps
the disclosures of the named pointers and their parents and appends a KB-JWT;
the reference verifier checks sd_hash, nonce and aud. TokenMint also presents
an SD-JWT the reference issuer made.
C (reference issues and presents -> TokenMint): SDObj-marked claims, nested,
arrays, recursive, decoys; the reference holder presents with a KB-JWT (ES256
and EdDSA holder keys) and `tokenmint sdjwt verify --aud --nonce` prints
exactly the claims expected; also an SD-JWT VC (typ dc+sd-jwt, vct).
D: refusals, exit 2 after a control that passes: changed, foreign and
repeated disclosures, wrong nonce or aud, a KB-JWT by another key or with a
stale sd_hash, another issuer key, --require-kb without a KB-JWT, exp and nbf,
an _sd_alg other than sha-256, and SD-JWTs built by hand that break the
processing rules of RFC 9901 section 7.1.
E: usage errors exit 2.

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
import warnings

from jwcrypto.jwk import JWK
from jwcrypto.jws import JWS
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer
from sd_jwt.verifier import SDJWTVerifier

from tmcli import Checks, Fail, expect

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
ALGS = ["EdDSA", "ES256", "ES384", "ES512", "PS256", "RS256"]
CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

ISS = "https://issuer.tokenmint.test"
AUD = "https://verifier.tokenmint.test"
VCT = "https://credentials.tokenmint.test/identity_credential"
TTL = 3600
KB_IAT_SLACK = 120  # seconds: a KB-JWT's iat must be this close to now
REF_TYP = "example+sd-jwt"  # the reference issuer's default typ (SDJWTCommon.SD_JWT_HEADER)

checks = Checks()


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_json(obj):
    return b64url(json.dumps(obj, separators=(",", ":")).encode("utf-8"))


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    return path


_serial = itertools.count()


def tmp_path(tmp, stem, ext="json"):
    return os.path.join(tmp, f"{stem}-{next(_serial)}.{ext}")


def nonce():
    return "n" + os.urandom(12).hex()  # never starts with "-"


def flip_char(text, i=None):
    """One base64url character changed (in the middle: the last one's low bits
    can be padding, which a lenient decoder ignores)."""
    i = len(text) // 2 if i is None else i
    c = "A" if text[i] != "A" else "B"
    return text[:i] + c + text[i + 1:]


def sd_hash(presentation_without_kb):
    """RFC 9901 section 4.3.1: the hash over the SD-JWT up to its last "~"."""
    return b64url(hashlib.sha256(presentation_without_kb.encode("ascii")).digest())


def digest(disclosure, fn=hashlib.sha256):
    return b64url(fn(disclosure.encode("ascii")).digest())


# ---- JSON Pointers (RFC 6901) and the claims expected ------------------------

def ptr_join(ptr, token):
    return f"{ptr}/{str(token).replace('~', '~0').replace('/', '~1')}"


def ptr_tokens(ptr):
    expect(ptr.startswith("/"), f"not a JSON Pointer: {ptr!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in ptr.split("/")[1:]]


def closure(pointers):
    """The pointers and every one of their ancestors (what a holder keeps when
    it discloses a child: the parents come with it)."""
    out = set()
    for p in pointers:
        tokens = p.split("/")[1:]
        for n in range(1, len(tokens) + 1):
            out.add("/" + "/".join(tokens[:n]))
    return out


def project(value, sd, keep, ptr=""):
    """The claims a verifier must print: the selectively disclosable members
    and elements (sd) not kept are gone, array elements after them move up."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = ptr_join(ptr, k)
            if p in sd and p not in keep:
                continue
            out[k] = project(v, sd, keep, p)
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            p = ptr_join(ptr, i)
            if p in sd and p not in keep:
                continue
            out.append(project(v, sd, keep, p))
        return out
    return value


def expected_claims(claims, sd, disclosed, extra=None):
    return project(claims, set(sd), closure(disclosed)) | (extra or {})


def present_keeps(sd, named):
    """The pointers whose disclosures `sdjwt present --disclose` keeps: the
    named ones and their disclosable parents, not what lies beneath a named
    one (as the reference holder does with {"address": True})."""
    return set(sd) & closure(named)


def mark_sd(value, sd, ptr=""):
    """The same claims for the reference issuer: SDObj around the names of
    selectively disclosable members and around such array elements."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = ptr_join(ptr, k)
            out[SDObj(k) if p in sd else k] = mark_sd(v, sd, p)
        return out
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            p = ptr_join(ptr, i)
            inner = mark_sd(v, sd, p)
            out.append(SDObj(inner) if p in sd else inner)
        return out
    return value


def ref_disclosure_spec(claims, pointers):
    """The reference holder's claims_to_disclose for a list of pointers: nested
    dicts for objects, lists by position for arrays, True at the leaves."""
    spec = {}
    for p in pointers:
        node_claims, node_spec = claims, spec
        tokens = ptr_tokens(p)
        for n, tok in enumerate(tokens):
            key = int(tok) if isinstance(node_claims, list) else tok
            child = node_claims[key]
            existing = node_spec[key] if isinstance(node_spec, list) else node_spec.get(key)
            if n == len(tokens) - 1:
                if not isinstance(existing, (dict, list)):  # else a child of it is named too
                    node_spec[key] = True
                break
            if not isinstance(existing, (dict, list)):
                existing = [None] * len(child) if isinstance(child, list) else {}
                node_spec[key] = existing
            node_claims, node_spec = child, existing
    return spec


# ---- reading an SD-JWT by hand -------------------------------------------------

def split_sd_jwt(text):
    """(issuer-signed JWT, [disclosures], KB-JWT or "") of a compact SD-JWT."""
    parts = text.split("~")
    expect(len(parts) >= 2, f"no '~' in {text[:60]!r}")
    expect(parts[0].count(".") == 2, f"the issuer-signed JWT is not a compact JWS: {parts[0][:60]!r}")
    return parts[0], parts[1:-1], parts[-1]


def jwt_parts(jwt):
    head, body, _ = jwt.split(".")
    return json.loads(b64d(head)), json.loads(b64d(body))


def is_placeholder(e):
    return isinstance(e, dict) and len(e) == 1 and isinstance(e.get("..."), str)


def map_disclosures(payload, disclosures):
    """Which pointer each disclosure stands for, and how many digests the
    payload holds in all (decoys included). Each digest must be referenced
    once, each disclosure must have the shape its place asks for."""
    by_digest = {digest(d): d for d in disclosures}
    expect(len(by_digest) == len(disclosures), "the same disclosure twice")
    found, count, seen = {}, 0, set()

    def use(dg):
        nonlocal count
        count += 1
        expect(dg not in seen, f"digest {dg} referenced twice")
        seen.add(dg)
        return by_digest.get(dg)

    def walk(node, ptr):
        if isinstance(node, dict):
            for dg in node.get("_sd", []):
                d = use(dg)
                if d is None:
                    continue
                arr = json.loads(b64d(d))
                expect(isinstance(arr, list) and len(arr) == 3,
                       f"disclosure in an _sd array is not [salt, name, value]: {arr}")
                expect(arr[1] not in node, f"disclosed name {arr[1]!r} also a plain member at {ptr or '/'}")
                p = ptr_join(ptr, arr[1])
                found[d] = (p, arr[0])
                walk(arr[2], p)
            for k, v in node.items():
                if k not in ("_sd", "_sd_alg"):
                    walk(v, ptr_join(ptr, k))
        elif isinstance(node, list):
            for i, e in enumerate(node):
                p = ptr_join(ptr, i)
                if is_placeholder(e):
                    d = use(e["..."])
                    if d is None:
                        continue
                    arr = json.loads(b64d(d))
                    expect(isinstance(arr, list) and len(arr) == 2,
                           f"disclosure of an array element is not [salt, value]: {arr}")
                    found[d] = (p, arr[0])
                    walk(arr[1], p)
                else:
                    walk(e, p)

    walk(payload, "")
    return found, count


def strip_sd(node):
    """The payload as a verifier sees it with no disclosure at all."""
    if isinstance(node, dict):
        return {k: strip_sd(v) for k, v in node.items() if k not in ("_sd", "_sd_alg")}
    if isinstance(node, list):
        return [strip_sd(e) for e in node if not is_placeholder(e)]
    return node


def inspect_issuance(issuance, claims, sd, decoys=0, extra=None):
    """An issuance made by TokenMint, read by hand: ends with "~", no KB-JWT,
    _sd_alg sha-256, one disclosure for each --sd pointer and nothing else,
    the decoys asked for, nothing selectively disclosable in the clear."""
    jwt, disclosures, kb = split_sd_jwt(issuance)
    expect(kb == "", f"the issuance does not end with '~' (last part {kb[:40]!r})")
    header, payload = jwt_parts(jwt)
    expect(payload.get("_sd_alg") == "sha-256", f"_sd_alg is {payload.get('_sd_alg')!r}, want 'sha-256'")
    found, count = map_disclosures(payload, disclosures)
    expect(len(found) == len(disclosures),
           f"{len(disclosures) - len(found)} of {len(disclosures)} disclosures are referenced by no digest")
    pointers = sorted(p for p, _ in found.values())
    expect(pointers == sorted(sd), f"the disclosures stand for {pointers}, want {sorted(sd)}")
    expect(count - len(disclosures) == decoys, f"{count - len(disclosures)} decoy digests, want {decoys}")
    salts = [s for _, s in found.values()]
    expect(all(isinstance(s, str) and len(s) >= 16 for s in salts), f"a salt is short or not a string: {salts}")
    expect(len(set(salts)) == len(salts), "two disclosures share a salt")
    visible = strip_sd(payload)
    want = project(claims, set(sd), set()) | (extra or {})
    expect(visible == want, f"the payload without disclosures shows {visible}, want {want}")
    return header, payload, found


def check_kb_by_hand(presentation, holder, aud, nonce_value):
    """The KB-JWT at the end of a presentation: signed by the holder's key,
    typ kb+jwt, aud, nonce, iat now, sd_hash over everything before it."""
    jwt, disclosures, kb = split_sd_jwt(presentation)
    expect(kb != "", "the presentation has no KB-JWT")
    jws = JWS()
    jws.deserialize(kb)
    try:
        jws.verify(holder.public)
    except Exception as exc:
        raise Fail(f"the KB-JWT does not verify with the holder's key: {type(exc).__name__}: {exc}")
    header = jws.jose_header
    payload = json.loads(jws.payload)
    expect(header.get("typ") == "kb+jwt", f"KB-JWT typ is {header.get('typ')!r}, want 'kb+jwt'")
    expect(header.get("alg") == holder.alg, f"KB-JWT alg is {header.get('alg')!r}, want {holder.alg!r}")
    expect(payload.get("aud") == aud, f"KB-JWT aud is {payload.get('aud')!r}, want {aud!r}")
    expect(payload.get("nonce") == nonce_value, f"KB-JWT nonce is {payload.get('nonce')!r}")
    iat = payload.get("iat")
    expect(isinstance(iat, int) and abs(iat - time.time()) < KB_IAT_SLACK, f"KB-JWT iat {iat!r} is not now")
    want = sd_hash(presentation[:-len(kb)])
    expect(payload.get("sd_hash") == want, f"KB-JWT sd_hash is {payload.get('sd_hash')!r}, want {want!r}")
    return header, payload


# ---- keys ----------------------------------------------------------------------

class Key:
    """A jwcrypto key pair, with its private and public JWK written to files."""

    def __init__(self, alg, tmp, stem):
        self.alg = alg
        if alg == "EdDSA":
            self.jwk = JWK.generate(kty="OKP", crv="Ed25519")
        elif alg in CURVES:
            self.jwk = JWK.generate(kty="EC", crv=CURVES[alg])
        else:
            self.jwk = JWK.generate(kty="RSA", size=2048)
        self.public_dict = self.jwk.export_public(as_dict=True)
        self.public = JWK(**self.public_dict)
        self.private_path = write_json(tmp_path(tmp, f"{stem}-{alg}"), self.jwk.export_private(as_dict=True))
        self.public_path = write_json(tmp_path(tmp, f"{stem}-{alg}.pub"), self.public_dict)


class KeyPool:
    def __init__(self, tmp):
        self.tmp = tmp
        self.keys = {}

    def get(self, alg, role="issuer"):
        if (alg, role) not in self.keys:
            self.keys[(alg, role)] = Key(alg, self.tmp, role)
        return self.keys[(alg, role)]

    def fresh(self, alg, role="other"):
        return Key(alg, self.tmp, role)


def jc_sign(key, header, payload):
    """A compact JWS made by jwcrypto (hand-built SD-JWTs and KB-JWTs)."""
    jws = JWS(payload=json.dumps(payload))
    jws.add_signature(key.jwk, alg=header["alg"], protected=json.dumps(header))
    return jws.serialize(compact=True)


def make_disclosure(name, value, salt=None):
    arr = [salt or b64url(os.urandom(16))] + ([] if name is None else [name]) + [value]
    return b64url(json.dumps(arr).encode("utf-8"))


def hand_sd_jwt(issuer, payload, disclosures, typ=REF_TYP):
    jwt = jc_sign(issuer, {"alg": issuer.alg, "typ": typ}, payload)
    return jwt + "~" + "".join(d + "~" for d in disclosures)


def with_kb(presentation, holder, aud, nonce_value, typ="kb+jwt", iat=None, hash_of=None, alg=None):
    """presentation (ending in "~") with a KB-JWT made by hand."""
    expect(presentation.endswith("~"), "with_kb needs a presentation without a KB-JWT")
    payload = {"iat": int(time.time()) if iat is None else iat, "aud": aud, "nonce": nonce_value,
               "sd_hash": sd_hash(presentation if hash_of is None else hash_of)}
    return presentation + jc_sign(holder, {"alg": alg or holder.alg, "typ": typ}, payload)


# ---- claims --------------------------------------------------------------------

def person(now, **extra):
    """The example user of RFC 9901 section 5, with iss, iat, exp and sub."""
    claims = {"iss": ISS, "iat": now, "exp": now + TTL, "sub": "user_42",
              "given_name": "John", "family_name": "Doe", "email": "johndoe@example.com",
              "phone_number": "+1-202-555-0101", "phone_number_verified": True,
              "address": {"street_address": "123 Main St", "locality": "Anytown",
                          "region": "Anystate", "country": "US"},
              "birthdate": "1940-01-01", "updated_at": 1570000000, "nationalities": ["US", "DE"]}
    claims.update(extra)
    return claims


FLAT_SD = ["/given_name", "/family_name", "/email", "/phone_number", "/phone_number_verified",
           "/address", "/birthdate", "/updated_at", "/nationalities"]
NESTED_SD = ["/given_name", "/email", "/address", "/address/street_address", "/address/locality",
             "/address/region"]
DEGREES = [{"type": "Bachelor of Science", "university": "University of Betelgeuse"},
           {"type": "Master of Science", "university": "University of Betelgeuse"}]


def arrays_claims(now):
    return person(now, nationalities=["US", "DE", "FR"], degrees=DEGREES, matrix=[[1, 2], [3, 4]])


ARRAYS_SD = ["/nationalities/0", "/nationalities/2", "/degrees/0/university", "/degrees/1",
             "/degrees/1/type", "/matrix/0", "/matrix/0/1", "/matrix/1/0"]


def names_claims(now):
    return {"iss": ISS, "iat": now, "exp": now + TTL,
            "a/b": "slash", "c~d": "tilde", "": "empty name", "Zo\u00eb": "caf\u00e9 \u2615",
            "types": {"null": None, "neg": -7, "half": 1.5, "list": [], "obj": {}, "t": True,
                      "f": False, "deep": {"x": {"y": "z"}}}}


NAMES_SD = ["/a~1b", "/c~0d", "/", "/Zo\u00eb", "/types/null", "/types/half", "/types/list",
            "/types/obj", "/types/f", "/types/deep", "/types/deep/x", "/types/deep/x/y"]


def mixed_claims(now):
    return person(now, degrees=DEGREES)


MIXED_SD = ["/given_name", "/family_name", "/email", "/birthdate", "/address", "/address/street_address",
            "/address/locality", "/nationalities/0", "/nationalities/1", "/degrees/0",
            "/degrees/0/university"]

# shape -> claims(now), --sd pointers, subsets the holder discloses, options
SHAPES = {
    "flat": dict(claims=person, sd=FLAT_SD,
                 subsets=[["/given_name", "/family_name", "/address"], ["/email"], []]),
    "nested, recursive": dict(claims=person, sd=NESTED_SD,
                              subsets=[["/address/street_address"], ["/address"],
                                       ["/given_name", "/address/locality", "/address/region"]]),
    "array elements": dict(claims=arrays_claims, sd=ARRAYS_SD,
                           subsets=[["/nationalities/2", "/degrees/1/type"],
                                    ["/matrix/0/1", "/degrees/0/university", "/matrix/1/0"],
                                    ["/nationalities/0", "/degrees/1"]]),
    "odd names and value types": dict(claims=names_claims, sd=NAMES_SD,
                                      subsets=[["/a~1b", "/types/deep/x/y", "/types/null"],
                                               ["/c~0d", "/", "/Zo\u00eb", "/types/half", "/types/list",
                                                "/types/obj", "/types/f"]]),
    "7 decoys": dict(claims=person, sd=FLAT_SD, decoys=7, subsets=[["/given_name", "/nationalities"]]),
    "holder key (cnf)": dict(claims=mixed_claims, sd=MIXED_SD, holder=True,
                             subsets=[["/given_name", "/address/street_address", "/degrees/0/university"],
                                      []]),
    "SD-JWT VC (--vct)": dict(claims=person, sd=FLAT_SD, vct=VCT, want_typ="dc+sd-jwt",
                              subsets=[["/given_name", "/birthdate"]]),
    "--vct with --typ vc+sd-jwt": dict(claims=person, sd=FLAT_SD, vct=VCT, typ="vc+sd-jwt",
                                       want_typ="vc+sd-jwt", subsets=[["/family_name"]]),
    "--typ example+sd-jwt": dict(claims=person, sd=NESTED_SD, typ=REF_TYP, want_typ=REF_TYP,
                                 subsets=[["/address/region"]]),
}


# ---- TokenMint CLI -------------------------------------------------------------

def tm(*args, stdin=""):
    """Runs the CLI (stdin is always given, never inherited)."""
    return subprocess.run([TOKENMINT, *args], input=stdin, capture_output=True, text=True, timeout=300)


def tail(p):
    return " | ".join(p.stderr.strip().splitlines()[-3:])[-400:]  # the end says what went wrong


def tm_ok(*args, stdin=""):
    p = tm(*args, stdin=stdin)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p)}")
    return p.stdout


def one_line(what, out):
    expect(out.endswith("\n") and out.count("\n") == 1, f"{what} output is not one line and a newline: {out[:80]!r}")
    return out[:-1]


def tm_issue(tmp, issuer, claims, sd=(), decoys=None, holder=None, typ=None, vct=None, alg=None):
    args = ["sdjwt", "issue", "--key", issuer.private_path, "--alg", alg or issuer.alg,
            "--claims", write_json(tmp_path(tmp, "claims"), claims)]
    for p in sd:
        args += ["--sd", p]
    if decoys is not None:
        args += ["--decoys", str(decoys)]
    if holder is not None:
        args += ["--holder-key", holder.public_path]
    if typ is not None:
        args += ["--typ", typ]
    if vct is not None:
        args += ["--vct", vct]
    issuance = one_line("sdjwt issue", tm_ok(*args))
    expect(issuance.endswith("~"), f"sdjwt issue output does not end with '~': {issuance[-40:]!r}")
    return issuance


def tm_present(tmp, sd_jwt, disclose=(), all_=False, holder=None, aud=None, nonce_value=None, via_file=False):
    args = ["sdjwt", "present"]
    for p in disclose:
        args += ["--disclose", p]
    if all_:
        args.append("--all")
    if holder is not None:
        args += ["--holder-key", holder.private_path, "--aud", aud, "--nonce", nonce_value]
    if via_file:
        with open(tmp_path(tmp, "issuance", "txt"), "w", encoding="ascii") as f:
            f.write(sd_jwt + "\n")
        out = tm_ok(*args, "--in", f.name)
    else:
        out = tm_ok(*args, stdin=sd_jwt + "\n")  # as a pipe from `sdjwt issue` gives it
    return one_line("sdjwt present", out)


def tm_verify(tmp, issuer, presentation, aud=None, nonce_value=None, require_kb=False, typ=None, vct=None,
              via_file=False):
    key_path = issuer if isinstance(issuer, str) else issuer.public_path
    args = ["sdjwt", "verify", "--issuer-key", key_path]
    if aud is not None:
        args += ["--aud", aud]
    if nonce_value is not None:
        args += ["--nonce", nonce_value]
    if require_kb:
        args.append("--require-kb")
    if typ is not None:
        args += ["--typ", typ]
    if vct is not None:
        args += ["--vct", vct]
    if via_file:
        with open(tmp_path(tmp, "presentation", "txt"), "w", encoding="utf-8") as f:
            f.write(presentation)
        return tm(*args, "--in", f.name)
    return tm(*args, stdin=presentation)


def expect_verifies(what, p, claims):
    expect(p.returncode == 0, f"{what}: exit {p.returncode}, want 0 ({tail(p)})")
    try:
        printed = json.loads(one_line(f"{what}: sdjwt verify", p.stdout))
    except ValueError:
        raise Fail(f"{what}: stdout is not the claims JSON: {p.stdout[:120]!r}")
    expect(printed == claims, f"{what}: printed claims {printed}, want {claims}")


def expect_control(what, p, claims):
    """A refusal means something only if TokenMint accepts the good version: the
    refusal checks first have it verify that one."""
    expect_verifies(f"control: {what}", p, claims)


def expect_refuses(what, p):
    expect(p.returncode == 2, f"{what}: exit {p.returncode}, want 2 (stdout {p.stdout[:60]!r}, {tail(p)})")
    expect(p.stderr.strip() != "", f"{what}: exit 2 but nothing on stderr")
    expect(p.stdout == "", f"{what}: refused, yet printed {p.stdout[:60]!r}")


# ---- the reference implementation ----------------------------------------------

def ref_issue(claims, sd, issuer, holder=None, decoys=False, typ=None):
    extra = {"typ": typ} if typ else {}
    try:
        return SDJWTIssuer(mark_sd(claims, set(sd)), issuer.jwk, holder_key=holder.jwk if holder else None,
                           sign_alg=issuer.alg, add_decoy_claims=decoys,
                           extra_header_parameters=extra).sd_jwt_issuance
    except Exception as exc:
        raise Fail(f"the reference issuer failed: {type(exc).__name__}: {exc}")


def ref_present(issuance, claims, pointers, holder=None, aud=None, nonce_value=None):
    try:
        h = SDJWTHolder(issuance)
        h.create_presentation(ref_disclosure_spec(claims, pointers), nonce=nonce_value, aud=aud,
                              holder_key=holder.jwk if holder else None,
                              sign_alg=holder.alg if holder else None)
    except Exception as exc:
        raise Fail(f"the reference holder cannot present {pointers}: {type(exc).__name__}: {exc}")
    if holder is not None:
        expect(h.serialized_key_binding_jwt, "the reference holder made no KB-JWT")
    return h.sd_jwt_presentation


def ref_verify(what, presentation, issuer, aud=None, nonce_value=None):
    """The reference verifier: (the processed claims, the issuer JWT's header as
    its key callback saw it)."""
    seen = {}

    def issuer_key(iss, header):
        seen.update(header, iss=iss)
        return issuer.public

    try:
        v = SDJWTVerifier(presentation, issuer_key, expected_aud=aud, expected_nonce=nonce_value)
        return v.get_verified_payload(), seen
    except Exception as exc:
        raise Fail(f"the reference verifier rejects {what}: {type(exc).__name__}: {exc}")


def ref_refuses(what, presentation, issuer, aud=None, nonce_value=None):
    try:
        SDJWTVerifier(presentation, lambda iss, header: issuer.public, expected_aud=aud,
                      expected_nonce=nonce_value).get_verified_payload()
    except Exception:
        return
    raise Fail(f"the reference verifier accepts {what}")


# ---- A: TokenMint issues, the reference holder presents and verifier checks -----

def check_a(shape, alg, pool, tmp):
    spec = SHAPES[shape]
    claims = spec["claims"](int(time.time()))
    sd = spec["sd"]
    issuer = pool.get(alg)
    # P-256: the reference verifier checks KB-JWTs as ES256 only
    holder = pool.get("ES256", "holder") if spec.get("holder") else None
    issuance = tm_issue(tmp, issuer, claims, sd, decoys=spec.get("decoys"), holder=holder,
                        typ=spec.get("typ"), vct=spec.get("vct"))
    extra = {"vct": spec["vct"]} if spec.get("vct") else {}
    if holder is not None:
        _, payload = jwt_parts(split_sd_jwt(issuance)[0])
        cnf = payload.get("cnf")
        expect(isinstance(cnf, dict) and isinstance(cnf.get("jwk"), dict), f"cnf is {cnf!r}, want {{jwk: ...}}")
        for m, v in holder.public_dict.items():
            expect(cnf["jwk"].get(m) == v, f"cnf.jwk {m} is {cnf['jwk'].get(m)!r}, want {v!r}")
        expect(not (PRIVATE_MEMBERS & set(cnf["jwk"])), "cnf.jwk carries private members")
        extra["cnf"] = cnf
    header, payload, _ = inspect_issuance(issuance, claims, sd, spec.get("decoys", 0), extra)
    expect(header.get("alg") == alg, f"header alg is {header.get('alg')!r}, want {alg!r}")
    if spec.get("want_typ"):
        typ = header.get("typ")
        expect(typ == spec["want_typ"], f"header typ is {typ!r}, want {spec['want_typ']!r}")

    full, seen = ref_verify("the full issuance", issuance, issuer)
    expect(full == claims | extra, f"the reference verifier reads the full issuance as {full}, want {claims | extra}")
    expect(seen.get("alg") == alg, f"the reference verifier saw header {seen}")
    for subset in spec["subsets"]:
        want = expected_claims(claims, sd, subset, extra)
        presentation = ref_present(issuance, claims, subset)
        got, _ = ref_verify(f"a presentation of {subset}", presentation, issuer)
        expect(got == want, f"presentation of {subset}: the reference verifier reads {got}, want {want}")
        if holder is not None:
            n = nonce()
            presentation = ref_present(issuance, claims, subset, holder, AUD, n)
            got, _ = ref_verify(f"a presentation of {subset} with a KB-JWT", presentation, issuer, AUD, n)
            expect(got == want, f"presentation of {subset} with a KB-JWT: read {got}, want {want}")
            # and TokenMint reads the reference holder's presentation of its own issuance
            expect_verifies(f"tokenmint verify of the KB presentation of {subset}",
                            tm_verify(tmp, issuer, presentation, AUD, n), want)


# ---- B: TokenMint presents, the reference verifier checks -------------------------

def expect_kept(issuance, presentation, keep):
    """The presentation is the issuance's issuer-signed JWT with exactly the
    disclosures that stand for the pointers in keep."""
    jwt, issued, _ = split_sd_jwt(issuance)
    _, payload = jwt_parts(jwt)
    found, _ = map_disclosures(payload, issued)
    got_jwt, disclosures, kb = split_sd_jwt(presentation)
    expect(got_jwt == jwt, "the presentation's issuer-signed JWT differs from the issuance's")
    expect(all(d in found for d in disclosures), "the presentation holds a disclosure the issuance does not")
    got = sorted(found[d][0] for d in disclosures)
    want = sorted(p for p, _ in found.values() if p in keep)
    expect(got == want, f"present kept {got}, want {want}")
    return payload, kb


def check_b(alg, disclose, all_, with_holder, via_file, pool, tmp):
    claims = mixed_claims(int(time.time()))
    issuer = pool.get(alg)
    holder = pool.get("ES256", "holder") if with_holder else None
    issuance = tm_issue(tmp, issuer, claims, MIXED_SD, decoys=3, holder=holder)
    n = nonce()
    presentation = tm_present(tmp, issuance, disclose, all_, holder, AUD, n, via_file)
    keep = set(MIXED_SD) if all_ else present_keeps(MIXED_SD, disclose)
    payload, kb = expect_kept(issuance, presentation, keep)
    want = project(claims, set(MIXED_SD), keep) | ({"cnf": payload["cnf"]} if holder else {})
    if holder is not None:
        check_kb_by_hand(presentation, holder, AUD, n)
        got, _ = ref_verify("TokenMint's presentation with a KB-JWT", presentation, issuer, AUD, n)
        ref_refuses("TokenMint's presentation under another nonce", presentation, issuer, AUD, nonce())
    else:
        expect(kb == "", f"a presentation without --holder-key ends with {kb[:40]!r}, not '~'")
        got, _ = ref_verify("TokenMint's presentation", presentation, issuer)
    expect(got == want, f"the reference verifier reads {got}, want {want}")


def check_b_ref_issued(pool, tmp):
    """TokenMint presents an SD-JWT that the reference issuer made."""
    claims = mixed_claims(int(time.time()))
    issuer, holder = pool.get("ES256"), pool.get("ES256", "holder")
    issuance = ref_issue(claims, MIXED_SD, issuer, holder, decoys=True)
    disclose = ["/family_name", "/address/locality", "/nationalities/0", "/degrees/0/university"]
    n = nonce()
    presentation = tm_present(tmp, issuance, disclose, holder=holder, aud=AUD, nonce_value=n)
    keep = present_keeps(MIXED_SD, disclose)
    payload, _ = expect_kept(issuance, presentation, keep)
    check_kb_by_hand(presentation, holder, AUD, n)
    want = project(claims, set(MIXED_SD), keep) | {"cnf": payload["cnf"]}
    got, _ = ref_verify("TokenMint's presentation of the reference issuance", presentation, issuer, AUD, n)
    expect(got == want, f"the reference verifier reads {got}, want {want}")


def check_b_eddsa_holder(pool, tmp):
    """An Ed25519 holder key: the reference verifier takes ES256 KB-JWTs only,
    so jwcrypto checks the KB-JWT by hand, and TokenMint verifies it."""
    claims = mixed_claims(int(time.time()))
    issuer, holder = pool.get("ES384"), pool.get("EdDSA", "holder")
    issuance = tm_issue(tmp, issuer, claims, MIXED_SD, holder=holder)
    disclose = ["/given_name", "/degrees/0"]
    n = nonce()
    presentation = tm_present(tmp, issuance, disclose, holder=holder, aud=AUD, nonce_value=n)
    keep = present_keeps(MIXED_SD, disclose)
    payload, _ = expect_kept(issuance, presentation, keep)
    check_kb_by_hand(presentation, holder, AUD, n)
    want = project(claims, set(MIXED_SD), keep) | {"cnf": payload["cnf"]}
    got, _ = ref_verify("the presentation, its KB-JWT unchecked", presentation, issuer)
    expect(got == want, f"the reference verifier reads {got}, want {want}")
    expect_verifies("tokenmint verify --require-kb",
                    tm_verify(tmp, issuer, presentation, AUD, n, require_kb=True), want)


# ---- C: the reference implementation issues and presents, TokenMint verifies ------

def check_c(shape, alg, holder_alg, pool, tmp):
    spec = SHAPES[shape]
    claims = spec["claims"](int(time.time()))
    sd = spec["sd"]
    issuer = pool.get(alg)
    holder = pool.get(holder_alg, "holder") if holder_alg else None
    issuance = ref_issue(claims, sd, issuer, holder, decoys=True)
    _, payload = jwt_parts(split_sd_jwt(issuance)[0])
    extra = {"cnf": payload["cnf"]} if holder else {}
    expect_verifies("the full issuance", tm_verify(tmp, issuer, issuance, via_file=True), claims | extra)
    for i, subset in enumerate(spec["subsets"]):
        want = expected_claims(claims, sd, subset, extra)
        presentation = ref_present(issuance, claims, subset)
        expect_verifies(f"presentation of {subset}", tm_verify(tmp, issuer, presentation), want)
        if holder is not None:
            n = nonce()
            presentation = ref_present(issuance, claims, subset, holder, AUD, n)
            expect_verifies(f"presentation of {subset} with a KB-JWT",
                            tm_verify(tmp, issuer, presentation, AUD, n, require_kb=i % 2 == 1,
                                      via_file=i % 2 == 0), want)


def check_c_vc(pool, tmp):
    """An SD-JWT VC: typ dc+sd-jwt through extra_header_parameters, vct."""
    claims = person(int(time.time()), vct=VCT)
    issuer, holder = pool.get("ES256"), pool.get("ES256", "holder")
    issuance = ref_issue(claims, FLAT_SD, issuer, holder, decoys=True, typ="dc+sd-jwt")
    header, payload = jwt_parts(split_sd_jwt(issuance)[0])
    expect(header.get("typ") == "dc+sd-jwt", f"the reference issuer wrote typ {header.get('typ')!r}")
    subset = ["/given_name", "/birthdate", "/address"]
    want = expected_claims(claims, FLAT_SD, subset, {"cnf": payload["cnf"]})
    n = nonce()
    presentation = ref_present(issuance, claims, subset, holder, AUD, n)
    expect_verifies("VC with --typ and --vct",
                    tm_verify(tmp, issuer, presentation, AUD, n, typ="dc+sd-jwt", vct=VCT), want)
    expect_verifies("VC with --vct", tm_verify(tmp, issuer, presentation, AUD, n, vct=VCT), want)
    expect_verifies("VC without --typ or --vct", tm_verify(tmp, issuer, presentation, AUD, n), want)
    expect_refuses("VC checked with --vct of another type",
                   tm_verify(tmp, issuer, presentation, AUD, n, vct=VCT + "/other"))
    expect_refuses("VC checked with --typ example+sd-jwt", tm_verify(tmp, issuer, presentation, AUD, n, typ=REF_TYP))


def check_c_default_typ(pool, tmp):
    """The reference issuer's default typ (example+sd-jwt) named with --typ;
    a dc+sd-jwt expectation refuses it."""
    claims = person(int(time.time()))
    issuer = pool.get("EdDSA")
    issuance = ref_issue(claims, NESTED_SD, issuer)
    header, _ = jwt_parts(split_sd_jwt(issuance)[0])
    expect(header.get("typ") == REF_TYP, f"the reference issuer's default typ is {header.get('typ')!r}")
    expect_verifies("--typ example+sd-jwt", tm_verify(tmp, issuer, issuance, typ=REF_TYP), claims)
    expect_refuses("--typ dc+sd-jwt on an example+sd-jwt", tm_verify(tmp, issuer, issuance, typ="dc+sd-jwt"))


# ---- D: refusals -------------------------------------------------------------------

DISCLOSED = ["/given_name", "/family_name", "/address"]


def d_base(pool, holder=True, **extra_claims):
    """A reference issuance (ES256, cnf with a P-256 holder key) and what a
    presentation of DISCLOSED must print."""
    claims = person(int(time.time()), **extra_claims)
    issuer = pool.get("ES256")
    holder_key = pool.get("ES256", "holder") if holder else None
    issuance = ref_issue(claims, FLAT_SD, issuer, holder_key)
    _, payload = jwt_parts(split_sd_jwt(issuance)[0])
    want = expected_claims(claims, FLAT_SD, DISCLOSED, {"cnf": payload["cnf"]} if holder else {})
    return claims, issuer, holder_key, issuance, want


def d_presentation(pool, tmp, kb=False):
    """A presentation of DISCLOSED (with a KB-JWT for AUD and a fresh nonce if
    kb) that TokenMint accepts, as the control."""
    claims, issuer, holder, issuance, want = d_base(pool)
    n = nonce()
    if kb:
        presentation = ref_present(issuance, claims, DISCLOSED, holder, AUD, n)
        expect_control("the untouched presentation", tm_verify(tmp, issuer, presentation, AUD, n), want)
    else:
        presentation = ref_present(issuance, claims, DISCLOSED)
        expect_control("the untouched presentation", tm_verify(tmp, issuer, presentation), want)
    return claims, issuer, holder, issuance, presentation, n


def replace_disclosure(presentation, i, new):
    parts = presentation.split("~")
    parts[1 + i] = new
    return "~".join(parts)


def given_name_index(presentation):
    for i, d in enumerate(split_sd_jwt(presentation)[1]):
        if json.loads(b64d(d))[1] == "given_name":
            return i
    raise Fail("no given_name disclosure in the presentation")


def check_d_changed_char(pool, tmp):
    _, issuer, _, _, presentation, _ = d_presentation(pool, tmp)
    i = given_name_index(presentation)
    d = split_sd_jwt(presentation)[1][i]
    expect_refuses("a disclosure with one base64url character changed",
                   tm_verify(tmp, issuer, replace_disclosure(presentation, i, flip_char(d))))
    salt, name, value = json.loads(b64d(d))
    forged = b64url(json.dumps([salt, name, value[:-1] + chr(ord(value[-1]) + 1)]).encode("utf-8"))
    expect_refuses("a well-formed disclosure whose value differs in one character",
                   tm_verify(tmp, issuer, replace_disclosure(presentation, i, forged)))


def check_d_foreign(pool, tmp):
    claims, issuer, holder, _, presentation, _ = d_presentation(pool, tmp)
    other = ref_issue(claims, FLAT_SD, issuer, holder)  # same issuer, same claims, other salts
    foreign = [d for d in split_sd_jwt(other)[1] if json.loads(b64d(d))[1] == "email"]
    expect(len(foreign) == 1, "the other SD-JWT has no email disclosure")
    appended = presentation + foreign[0] + "~"
    expect_refuses("a disclosure of another SD-JWT appended", tm_verify(tmp, issuer, appended))
    n = nonce()
    expect_refuses("the same, under a KB-JWT made over it",
                   tm_verify(tmp, issuer, with_kb(appended, holder, AUD, n), AUD, n))


def check_d_twice(pool, tmp):
    _, issuer, holder, _, presentation, _ = d_presentation(pool, tmp)
    d = split_sd_jwt(presentation)[1][given_name_index(presentation)]
    twice = presentation + d + "~"
    expect_refuses("the same disclosure twice", tm_verify(tmp, issuer, twice))
    n = nonce()
    expect_refuses("the same, under a KB-JWT made over it",
                   tm_verify(tmp, issuer, with_kb(twice, holder, AUD, n), AUD, n))


def check_d_nonce_aud(pool, tmp):
    _, issuer, _, _, presentation, n = d_presentation(pool, tmp, kb=True)
    expect_refuses("another nonce", tm_verify(tmp, issuer, presentation, AUD, n + "0"))
    expect_refuses("another aud", tm_verify(tmp, issuer, presentation, "https://other.tokenmint.test", n))
    expect_refuses("another --aud and no --nonce", tm_verify(tmp, issuer, presentation, "x", None))


def check_d_kb_key(pool, tmp):
    claims, issuer, holder, issuance, want = d_base(pool)
    presentation = ref_present(issuance, claims, DISCLOSED)
    n = nonce()
    good = with_kb(presentation, holder, AUD, n)
    expect_control("a KB-JWT made by hand with the holder's key", tm_verify(tmp, issuer, good, AUD, n), want)
    ref_verify("the hand-made KB-JWT", good, issuer, AUD, n)  # the harness's KB-JWT is right
    other = pool.fresh("ES256")
    expect_refuses("a KB-JWT signed by another key",
                   tm_verify(tmp, issuer, with_kb(presentation, other, AUD, n), AUD, n))
    expect_refuses("a KB-JWT of typ JWT",
                   tm_verify(tmp, issuer, with_kb(presentation, holder, AUD, n, typ="JWT"), AUD, n))
    now = int(time.time())
    expect_refuses("a KB-JWT issued an hour ago",
                   tm_verify(tmp, issuer, with_kb(presentation, holder, AUD, n, iat=now - 3600), AUD, n))
    expect_refuses("a KB-JWT issued an hour ahead",
                   tm_verify(tmp, issuer, with_kb(presentation, holder, AUD, n, iat=now + 3600), AUD, n))
    unsigned = b64url_json({"alg": "none", "typ": "kb+jwt"}) + "." + b64url_json(
        {"iat": int(time.time()), "aud": AUD, "nonce": n, "sd_hash": sd_hash(presentation)}) + "."
    expect_refuses("an unsigned KB-JWT (alg none)", tm_verify(tmp, issuer, presentation + unsigned, AUD, n))


def check_d_sd_hash(pool, tmp):
    claims, issuer, holder, issuance, presentation, n = d_presentation(pool, tmp, kb=True)
    jwt, disclosures, kb = split_sd_jwt(presentation)
    expect(len(disclosures) == 3, f"the presentation has {len(disclosures)} disclosures, want 3")
    stripped = "~".join([jwt, *disclosures[1:], kb])
    expect_refuses("a disclosure removed after the KB-JWT was made", tm_verify(tmp, issuer, stripped, AUD, n))
    email = [d for d in split_sd_jwt(issuance)[1] if json.loads(b64d(d))[1] == "email"][0]
    added = "~".join([jwt, *disclosures, email, kb])
    expect_refuses("a disclosure of the same SD-JWT added after the KB-JWT was made",
                   tm_verify(tmp, issuer, added, AUD, n))
    bare = "~".join([jwt, *disclosures, ""])
    stale = with_kb(bare, holder, AUD, n, hash_of=bare[:-1])
    expect_refuses("sd_hash over the presentation without its last '~'", tm_verify(tmp, issuer, stale, AUD, n))


def check_d_issuer_key(pool, tmp):
    _, issuer, _, _, presentation, n = d_presentation(pool, tmp, kb=True)
    other = pool.fresh("ES256")
    expect_refuses("another issuer key", tm_verify(tmp, other, presentation, AUD, n))
    expect_refuses("an issuer key of another type", tm_verify(tmp, pool.get("EdDSA"), presentation, AUD, n))
    jwt = presentation.split("~", 1)[0]
    head, body, sig = jwt.split(".")
    expect_refuses("one signature character changed",
                   tm_verify(tmp, issuer, presentation.replace(jwt, f"{head}.{body}.{flip_char(sig)}"), AUD, n))
    _, payload = jwt_parts(jwt)
    resigned = jc_sign(other, {"alg": "ES256", "typ": REF_TYP}, payload)
    expect_refuses("the issuer payload re-signed by another key",
                   tm_verify(tmp, issuer, presentation.replace(jwt, resigned), AUD, n))


def check_d_require_kb(pool, tmp):
    _, issuer, _, _, presentation, _ = d_presentation(pool, tmp)
    n = nonce()
    expect_refuses("--require-kb without a KB-JWT", tm_verify(tmp, issuer, presentation, AUD, n, require_kb=True))
    expect_refuses("--aud and --nonce without a KB-JWT", tm_verify(tmp, issuer, presentation, AUD, n))
    claims, issuer, _, issuance, _ = d_base(pool, holder=False)
    bare = ref_present(issuance, claims, DISCLOSED)
    want = expected_claims(claims, FLAT_SD, DISCLOSED)
    expect_control("an SD-JWT without cnf, no KB-JWT", tm_verify(tmp, issuer, bare), want)
    expect_refuses("a KB-JWT on an SD-JWT without cnf",
                   tm_verify(tmp, issuer, with_kb(bare, pool.get("ES256", "holder"), AUD, n), AUD, n))


def check_d_time(pool, tmp):
    now = int(time.time())
    claims, issuer, _, issuance, want = d_base(pool, holder=False)
    expect_control("exp an hour ahead", tm_verify(tmp, issuer, ref_present(issuance, claims, DISCLOSED)), want)
    claims = person(now, iat=now - 7200, exp=now - 3600)
    expired = ref_issue(claims, FLAT_SD, issuer)
    expect_refuses("exp an hour in the past", tm_verify(tmp, issuer, ref_present(expired, claims, DISCLOSED)))
    claims = person(now, nbf=now + 3600)
    early = ref_issue(claims, FLAT_SD, issuer)
    expect_refuses("nbf an hour ahead", tm_verify(tmp, issuer, ref_present(early, claims, DISCLOSED)))


def hand_payload(**extra):
    now = int(time.time())
    return {"iss": ISS, "iat": now, "exp": now + TTL} | extra


def check_d_sd_alg(pool, tmp):
    issuer = pool.get("ES256")
    d = make_disclosure("given_name", "John")
    base = hand_payload()
    want = base | {"given_name": "John"}
    good = hand_sd_jwt(issuer, base | {"_sd": [digest(d)], "_sd_alg": "sha-256"}, [d])
    expect_control("built by hand, _sd_alg sha-256", tm_verify(tmp, issuer, good), want)
    ref_verify("the hand-built SD-JWT", good, issuer)  # the harness builds it right
    bad = hand_sd_jwt(issuer, base | {"_sd": [digest(d, hashlib.sha512)], "_sd_alg": "sha-512"}, [d])
    expect_refuses("_sd_alg sha-512, sha-512 digests", tm_verify(tmp, issuer, bad))
    # A verifier that ignored _sd_alg would find no digest for the disclosure
    # above and refuse for that; these two it would accept.
    bad = hand_sd_jwt(issuer, base | {"_sd": [digest(d)], "_sd_alg": "sha-512"}, [d])
    expect_refuses("_sd_alg sha-512, sha-256 digests", tm_verify(tmp, issuer, bad))
    bad = hand_sd_jwt(issuer, base | {"_sd": [digest(d, hashlib.sha512)], "_sd_alg": "sha-512"}, [])
    expect_refuses("_sd_alg sha-512, nothing disclosed", tm_verify(tmp, issuer, bad))


def check_d_sd_alg_absent(pool, tmp):
    """RFC 9901 section 4.1.1: without _sd_alg the digests are sha-256."""
    issuer = pool.get("ES256")
    d = make_disclosure("given_name", "John")
    base = hand_payload()
    expect_verifies("no _sd_alg", tm_verify(tmp, issuer, hand_sd_jwt(issuer, base | {"_sd": [digest(d)]}, [d])),
                    base | {"given_name": "John"})


def check_d_rules(pool, tmp):
    """SD-JWTs built by hand that break RFC 9901 section 7.1."""
    issuer = pool.get("ES256")
    d = make_disclosure("given_name", "John")
    base = hand_payload()
    good = hand_sd_jwt(issuer, base | {"_sd": [digest(d)], "_sd_alg": "sha-256"}, [d])
    expect_control("built by hand", tm_verify(tmp, issuer, good), base | {"given_name": "John"})
    cases = {
        "a digest twice in the payload": (base | {"_sd": [digest(d), digest(d)]}, [d]),
        "a disclosed name that is also a plain claim": (base | {"given_name": "Jane", "_sd": [digest(d)]}, [d]),
    }
    element = make_disclosure(None, "US")
    cases["an array-element disclosure in _sd"] = (base | {"_sd": [digest(element)]}, [element])
    cases["an object-member disclosure in an array"] = (base | {"nationalities": [{"...": digest(d)}]}, [d])
    cases["an array-element digest twice in one array"] = (
        base | {"nationalities": [{"...": digest(element)}, {"...": digest(element)}]}, [element])
    for name in ("_sd", "..."):
        weird = make_disclosure(name, ["x"])
        cases[f"a disclosure named {name!r}"] = (base | {"_sd": [digest(weird)]}, [weird])
    nested = make_disclosure("street_address", "123 Main St")
    inner = make_disclosure("address", {"_sd": [digest(nested)], "country": "US"})
    inner_again = make_disclosure("home", {"_sd": [digest(nested)]})
    cases["one digest in two disclosures"] = (base | {"_sd": [digest(inner), digest(inner_again)]},
                                              [inner, inner_again, nested])
    for what, (payload, disclosures) in cases.items():
        payload = payload | {"_sd_alg": "sha-256"}
        expect_refuses(what, tm_verify(tmp, issuer, hand_sd_jwt(issuer, payload, disclosures)))


def check_d_framing(pool, tmp):
    _, issuer, _, _, presentation, _ = d_presentation(pool, tmp)
    expect_refuses("no trailing '~' (a disclosure where the KB-JWT would be)",
                   tm_verify(tmp, issuer, presentation[:-1]))
    expect_refuses("the issuer-signed JWT alone, no '~'", tm_verify(tmp, issuer, presentation.split("~", 1)[0]))
    expect_refuses("an empty disclosure ('~~')", tm_verify(tmp, issuer, presentation + "~"))


# ---- E: usage errors ---------------------------------------------------------------

def check_e(pool, tmp):
    issuer = pool.get("ES256")
    claims = person(int(time.time()))
    issuance = tm_issue(tmp, issuer, claims, FLAT_SD)
    p = tm("sdjwt", "verify", stdin=issuance)
    expect(p.returncode == 2, f"sdjwt verify without --issuer-key: exit {p.returncode}, want 2")
    p = tm("sdjwt", "issue", "--key", issuer.private_path, "--claims", write_json(tmp_path(tmp, "claims"), claims),
           "--sd", "/no_such_claim")
    expect(p.returncode == 2, f"sdjwt issue --sd naming no member: exit {p.returncode}, want 2")
    p = tm("sdjwt", "issue", "--key", issuer.private_path, "--claims",
           write_json(tmp_path(tmp, "claims"), claims | {"_sd": ["x"]}), "--sd", "/given_name")
    expect(p.returncode == 2, f"sdjwt issue of claims holding an _sd member: exit {p.returncode}, want 2")
    for junk in ("", "not an sd-jwt", "a.b.c~", "~~~"):
        expect_refuses(f"verify of {junk!r}", tm_verify(tmp, issuer, junk))


def main():
    warnings.simplefilter("ignore")
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory(prefix="tokenmint-sdjwt-interop-") as tmp:
        pool = KeyPool(tmp)
        print("# A: TokenMint issues -> sd-jwt reference holder and verifier")
        for alg in ALGS:
            checks.group(f"A {alg} flat claims", check_a, "flat", alg, pool, tmp)
        algs = itertools.cycle(ALGS)
        for shape in SHAPES:
            if shape != "flat":
                alg = next(algs)
                checks.group(f"A {alg} {shape}", check_a, shape, alg, pool, tmp)
        print("# B: TokenMint presents -> sd-jwt reference verifier")
        checks.group("B ES256 subset with parents, KB-JWT (stdin)", check_b, "ES256",
                     ["/given_name", "/address/street_address", "/nationalities/1", "/degrees/0/university"],
                     False, True, False, pool, tmp)
        checks.group("B EdDSA --all, KB-JWT (--in)", check_b, "EdDSA", [], True, True, True, pool, tmp)
        checks.group("B ES384 a parent alone, no KB-JWT", check_b, "ES384", ["/address", "/email"],
                     False, False, False, pool, tmp)
        checks.group("B PS256 nothing disclosed, KB-JWT", check_b, "PS256", [], False, True, True, pool, tmp)
        checks.group("B RS256 a member of a disclosable array element (parent kept), no KB-JWT", check_b, "RS256",
                     ["/degrees/0/university", "/nationalities/0"], False, False, True, pool, tmp)
        checks.group("B a reference issuance presented by TokenMint, KB-JWT", check_b_ref_issued, pool, tmp)
        checks.group("B Ed25519 holder key, KB-JWT checked by hand", check_b_eddsa_holder, pool, tmp)
        print("# C: sd-jwt reference issuer and holder -> TokenMint verifies")
        for shape, alg, holder_alg in (("flat", "ES256", "ES256"), ("holder key (cnf)", "EdDSA", "EdDSA"),
                                       ("nested, recursive", "ES384", "ES256"),
                                       ("array elements", "PS256", "EdDSA"),
                                       ("odd names and value types", "RS256", None),
                                       ("flat", "ES512", "ES256")):
            label = f"{holder_alg} holder key" if holder_alg else "no holder key"
            checks.group(f"C {alg} {shape}, decoys, {label}", check_c, shape, alg, holder_alg, pool, tmp)
        checks.group("C SD-JWT VC (typ dc+sd-jwt, vct)", check_c_vc, pool, tmp)
        checks.group("C the reference issuer's default typ", check_c_default_typ, pool, tmp)
        print("# D: refusals (exit 2)")
        checks.group("D a disclosure changed in one character", check_d_changed_char, pool, tmp)
        checks.group("D a disclosure of another SD-JWT", check_d_foreign, pool, tmp)
        checks.group("D the same disclosure twice", check_d_twice, pool, tmp)
        checks.group("D wrong nonce, wrong aud", check_d_nonce_aud, pool, tmp)
        checks.group("D KB-JWT by another key, of another typ, stale or ahead, unsigned", check_d_kb_key, pool, tmp)
        checks.group("D sd_hash over other disclosures", check_d_sd_hash, pool, tmp)
        checks.group("D issuer JWT under another key", check_d_issuer_key, pool, tmp)
        checks.group("D --require-kb, --aud/--nonce without a KB-JWT; KB-JWT without cnf",
                     check_d_require_kb, pool, tmp)
        checks.group("D exp in the past, nbf ahead", check_d_time, pool, tmp)
        checks.group("D _sd_alg sha-512", check_d_sd_alg, pool, tmp)
        checks.group("D _sd_alg absent means sha-256", check_d_sd_alg_absent, pool, tmp)
        checks.group("D processing rules of RFC 9901 section 7.1", check_d_rules, pool, tmp)
        checks.group("D framing: trailing '~', empty disclosure", check_d_framing, pool, tmp)
        print("# E: usage errors")
        checks.group("E usage errors and junk exit 2", check_e, pool, tmp)

    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
