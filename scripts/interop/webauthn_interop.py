#!/usr/bin/env python3
"""FIDO2/WebAuthn interop checks between the TokenMint CLI and two independent
Python relying-party libraries: py_webauthn (Duo Labs, `webauthn`) and
python-fido2 (Yubico, `fido2`).

S (pure Python, no CLI): this script's CBOR encoder/decoder against RFC 8949
   vectors and python-fido2's CTAP2 encoder, and every hand-built credential
   of groups C and D put through py_webauthn / python-fido2 first: the good
   ones must verify and each bad one must be refused by at least one of them,
   so that a failure in C or D points at TokenMint, not at this script.
A: TokenMint authenticator -> py_webauthn. `fido2 register` (ES256, EdDSA x
   none, packed self attestation) verified by verify_registration_response,
   3 x `fido2 assert` by verify_authentication_response with increasing sign
   counts, one flipped byte in the signature / in authenticatorData refused;
   the output is also checked for shape (PublicKeyCredential.toJSON()),
   clientDataJSON serialization and CTAP2-canonical CBOR. Plus a discoverable
   credential with user verification.
B: TokenMint authenticator -> python-fido2 Fido2Server (register_begin /
   register_complete with its packed/none attestation verifiers,
   authenticate_begin / authenticate_complete); tampered and stale responses
   refused.
C: hand-built credentials (cryptography keys, this script's CBOR encoder) ->
   TokenMint RP (`fido2 verify-registration`, `fido2 verify-assertion`):
   accepted with increasing counts, refused when replayed, tampered, from a
   wrong or subdomain origin, with BE=0/BS=1, with bytes after the
   attestationObject, with a non-minimal CBOR length in the COSE key, ...
D: a second external source. python-fido2 ships no software authenticator
   (its Fido2Client needs a CTAP device), so D says so and uses python-fido2's
   own WebAuthn data classes (AttestedCredentialData / AuthenticatorData /
   AttestationObject / CollectedClientData .create, CoseKey, its CBOR encoder)
   to build credentials for the TokenMint RP instead.
E: extensions, both directions. `fido2 register --cred-protect --prf
   --cred-blob --min-pin-length --large-blob --cred-props` -> py_webauthn
   (its authData extensions read with parse_authenticator_data) and
   python-fido2 (register_complete, AuthenticatorData.extensions); `fido2
   assert --prf --prf --cred-blob` -> both: credBlob and an 80-byte
   hmac-secret in authData, the PRF outputs only in clientExtensionResults,
   one output per input (the same input, the same output; with and without
   UV, different ones); credProtect 2 and 3 enforced; --large-blob needs
   --resident. Then credentials with an authData extensions map built in
   Python (this script's CBOR encoder, python-fido2's classes), accepted by
   py_webauthn and python-fido2 first -> `fido2 verify-registration` /
   `verify-assertion`, whose "extensions" must match; extension values that
   py_webauthn does not check (credProtect 7, minPinLength 2, ...) and PRF
   outputs or a large blob in clientExtensionResults must be refused with
   invalidExtension.

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
`--self-test` runs group S only (no CLI needed).
Prints one line per check and ends with `N passed, M failed`; exits 1 on any
failure.
"""
import base64
import copy
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

import webauthn
from webauthn.helpers import decode_credential_public_key, parse_authenticator_data, parse_cbor
from webauthn.helpers.exceptions import WebAuthnException

from fido2 import cbor as fido2_cbor
from fido2.attestation import AttestationType, NoneAttestation, PackedAttestation
from fido2.cose import ES256 as CoseES256
from fido2.cose import EdDSA as CoseEdDSA
from fido2.server import Fido2Server
from fido2.webauthn import (
    AttestationConveyancePreference,
    AttestationObject,
    AttestedCredentialData,
    AuthenticationResponse,
    AuthenticatorAssertionResponse,
    AuthenticatorAttachment,
    AuthenticatorAttestationResponse,
    AuthenticatorData,
    CollectedClientData,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialUserEntity,
    RegistrationResponse,
    UserVerificationRequirement,
)

from tmcli import Checks, Fail, expect

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
VERSIONS = {name: importlib.metadata.version(name) for name in ("webauthn", "fido2", "cryptography")}
RP_ID = "tokenmint.test"
ORIGIN = f"https://{RP_ID}"
OTHER_ORIGIN = "https://other.example"
SUBDOMAIN_ORIGIN = f"https://evil.{RP_ID}"
OTHER_RP_ID = "other.example"
COSE_ALG = {"ES256": -7, "EdDSA": -8}

FLAG_UP, FLAG_UV, FLAG_BE, FLAG_BS, FLAG_AT, FLAG_ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80

# Where a flipped byte goes. Signature: the last byte (for ES256 that is inside
# the DER INTEGER s, so the DER stays well formed and only the value is wrong).
# authenticatorData: offset 33, the most significant byte of signCount, so the
# counter goes *up* by 2^24 and rpIdHash, flags and the counter rule all still
# pass: only the signature can catch it.
SIG_FLIP_INDEX = -1
AUTHDATA_FLIP_INDEX = 33

checks = Checks()


# ---- base64url -------------------------------------------------------------

B64URL_UNPADDED = re.compile(r"^[A-Za-z0-9_-]*$")


def b64url(raw):
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sha256(data):
    return hashlib.sha256(data).digest()


def new_challenge():
    return os.urandom(32)


# ---- minimal CBOR (CTAP2 canonical) ------------------------------------------

class Raw(bytes):
    """An already-encoded CBOR item, spliced into the output as is (used to
    write deliberately non-canonical items for the negative cases)."""


def cbor_head(major, n, width=None):
    """Initial byte + argument. width None = the shortest form (canonical);
    0/1/2/4/8 forces that many argument bytes (0 = in the initial byte)."""
    if width is None:
        width = 0 if n < 24 else 1 if n < 0x100 else 2 if n < 0x10000 else 4 if n < 1 << 32 else 8
    if width == 0:
        if n >= 24:
            raise ValueError("argument too large for the initial byte")
        return bytes([major << 5 | n])
    ai = {1: 24, 2: 25, 4: 26, 8: 27}[width]
    return bytes([major << 5 | ai]) + n.to_bytes(width, "big")


def _ctap2_key_order(encoded_key):
    # CTAP2 canonical CBOR: lower major type first, then shorter encoding,
    # then byte-wise lexical order of the encoding.
    return (encoded_key[0] >> 5, len(encoded_key), encoded_key)


def cbor_encode(value):
    if isinstance(value, Raw):
        return bytes(value)
    if value is False:
        return b"\xf4"
    if value is True:
        return b"\xf5"
    if value is None:
        return b"\xf6"
    if isinstance(value, int):
        return cbor_head(0, value) if value >= 0 else cbor_head(1, -1 - value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
        return cbor_head(2, len(value)) + value
    if isinstance(value, str):
        data = value.encode("utf-8")
        return cbor_head(3, len(data)) + data
    if isinstance(value, (list, tuple)):
        return cbor_head(4, len(value)) + b"".join(cbor_encode(v) for v in value)
    if isinstance(value, dict):
        items = sorted(((cbor_encode(k), cbor_encode(v)) for k, v in value.items()),
                       key=lambda kv: _ctap2_key_order(kv[0]))
        for (k1, _), (k2, _) in zip(items, items[1:]):
            if k1 == k2:
                raise ValueError("duplicate map key")
        return cbor_head(5, len(items)) + b"".join(k + v for k, v in items)
    raise TypeError(f"cannot CBOR-encode {type(value).__name__}")


class CborError(ValueError):
    pass


def _cbor_decode_at(data, pos, depth=0):
    """Strict CTAP2-canonical decoder: shortest arguments, definite lengths,
    sorted unique map keys, no tags or floats. Returns (value, next_pos)."""
    if depth > 16:
        raise CborError("nesting too deep")
    if pos >= len(data):
        raise CborError("truncated")
    ib = data[pos]
    major, ai = ib >> 5, ib & 0x1F
    pos += 1
    if major == 7:
        simple = {20: False, 21: True, 22: None}
        if ai not in simple:
            raise CborError(f"unsupported simple/float item 0x{ib:02x}")
        return simple[ai], pos
    if ai < 24:
        n = ai
    elif ai <= 27:
        width = 1 << (ai - 24)
        if pos + width > len(data):
            raise CborError("truncated argument")
        n = int.from_bytes(data[pos:pos + width], "big")
        pos += width
        if n < (24 if width == 1 else 1 << (4 * width)):
            raise CborError(f"non-minimal argument (0x{ib:02x} for {n})")
    elif ai == 31:
        raise CborError("indefinite length")
    else:
        raise CborError(f"reserved additional information {ai}")
    if major == 0:
        return n, pos
    if major == 1:
        return -1 - n, pos
    if major in (2, 3):
        if pos + n > len(data):
            raise CborError("truncated string")
        raw = bytes(data[pos:pos + n])
        pos += n
        if major == 2:
            return raw, pos
        try:
            return raw.decode("utf-8"), pos
        except UnicodeDecodeError:
            raise CborError("invalid UTF-8 in text string")
    if major == 4:
        items = []
        for _ in range(n):
            item, pos = _cbor_decode_at(data, pos, depth + 1)
            items.append(item)
        return items, pos
    if major == 5:
        out, previous = {}, None
        for _ in range(n):
            key_start = pos
            key, pos = _cbor_decode_at(data, pos, depth + 1)
            encoded_key = bytes(data[key_start:pos])
            if previous is not None and _ctap2_key_order(encoded_key) <= _ctap2_key_order(previous):
                raise CborError("map keys not in CTAP2 canonical order (or duplicated)")
            previous = encoded_key
            if isinstance(key, (list, dict)):
                raise CborError("unsupported map key type")
            out[key], pos = _cbor_decode_at(data, pos, depth + 1)
        return out, pos
    raise CborError(f"unsupported major type {major} (tag)")


def cbor_decode(data):
    value, end = _cbor_decode_at(bytes(data), 0)
    if end != len(data):
        raise CborError(f"{len(data) - end} byte(s) after the CBOR item")
    return value


def parse_auth_data(ad):
    """authenticatorData, strictly (canonical COSE key, nothing left over)."""
    expect(len(ad) >= 37, f"authenticatorData is {len(ad)} bytes (< 37)")
    out = {"rpIdHash": ad[:32], "flags": ad[32], "signCount": int.from_bytes(ad[33:37], "big")}
    pos = 37
    if out["flags"] & FLAG_AT:
        expect(len(ad) >= pos + 18, "attested credential data truncated")
        out["aaguid"] = ad[pos:pos + 16]
        n = int.from_bytes(ad[pos + 16:pos + 18], "big")
        pos += 18
        out["credentialId"] = ad[pos:pos + n]
        expect(len(out["credentialId"]) == n, "credential id truncated")
        pos += n
        start = pos
        try:
            out["coseKey"], pos = _cbor_decode_at(ad, pos)
        except CborError as e:
            raise Fail(f"COSE key is not CTAP2-canonical CBOR: {e}")
        out["coseKeyBytes"] = ad[start:pos]
    if out["flags"] & FLAG_ED:
        try:
            out["extensions"], pos = _cbor_decode_at(ad, pos)
        except CborError as e:
            raise Fail(f"extensions are not CTAP2-canonical CBOR: {e}")
    expect(pos == len(ad), f"{len(ad) - pos} byte(s) left over in authenticatorData")
    return out


def client_data_json(ctype, challenge, origin, cross_origin=False):
    """CollectedClientData serialized as WebAuthn §5.8.1.1 prescribes:
    type, challenge, origin, crossOrigin, in that order, no whitespace."""
    return ('{"type":%s,"challenge":%s,"origin":%s,"crossOrigin":%s}' % (
        json.dumps(ctype), json.dumps(b64url(challenge)), json.dumps(origin),
        "true" if cross_origin else "false")).encode("utf-8")


def flipped(cred, field, index, mask=0x01):
    """A copy of a credential JSON with one byte of response[field] flipped."""
    out = copy.deepcopy(cred)
    raw = bytearray(b64d(out["response"][field]))
    raw[index] ^= mask
    out["response"][field] = b64url(raw)
    return out


# ---- hand-built external authenticator (cryptography + this CBOR encoder) -----

class HandAuthenticator:
    """An external authenticator made by hand: a cryptography key, this
    script's CBOR encoder, and nothing from the libraries under test."""

    AAGUID = bytes.fromhex("a11ce0000000400080000000000000c3")

    def __init__(self, alg="ES256"):
        self.alg = alg
        self.cose_alg = COSE_ALG[alg]
        if alg == "ES256":
            self.key = ec.generate_private_key(ec.SECP256R1())
        else:
            self.key = ed25519.Ed25519PrivateKey.generate()
        self.cred_id = os.urandom(32)

    def cose_map(self, x_override=None):
        pub = self.key.public_key()
        if self.alg == "ES256":
            nums = pub.public_numbers()
            x, y = nums.x.to_bytes(32, "big"), nums.y.to_bytes(32, "big")
            return {1: 2, 3: -7, -1: 1, -2: x_override or x, -3: y}
        raw = pub.public_bytes_raw()
        return {1: 1, 3: -8, -1: 6, -2: x_override or raw}

    def cose_key(self, nonminimal=False):
        if not nonminimal:
            return cbor_encode(self.cose_map())
        # Same key, but the x coordinate's byte-string length (32) is written
        # with a 2-byte argument, 0x59 0x00 0x20, instead of 0x58 0x20.
        x = self.cose_map()[-2]
        return cbor_encode(self.cose_map(x_override=Raw(cbor_head(2, len(x), width=2) + x)))

    def sign(self, data):
        if self.alg == "ES256":
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))  # DER, as WebAuthn wants
        return self.key.sign(data)

    def registration(self, challenge, origin=ORIGIN, rp_id=RP_ID, fmt="packed", flags=FLAG_UP,
                     sign_count=0, nonminimal_cose=False, trailing=b"", bad_att_sig=False,
                     ctype="webauthn.create", extensions=None):
        """extensions: a map for the authData (sets ED), encoded with cbor_encode."""
        if extensions is not None:
            flags |= FLAG_ED
        auth_data = (sha256(rp_id.encode()) + bytes([flags | FLAG_AT]) + sign_count.to_bytes(4, "big")
                     + self.AAGUID + len(self.cred_id).to_bytes(2, "big") + self.cred_id
                     + self.cose_key(nonminimal=nonminimal_cose))
        if extensions is not None:
            auth_data += cbor_encode(extensions)
        cdj = client_data_json(ctype, challenge, origin)
        if fmt == "packed":  # self attestation: signed by the credential key, no x5c
            sig = bytearray(self.sign(auth_data + sha256(cdj)))
            if bad_att_sig:
                sig[SIG_FLIP_INDEX] ^= 0x01
            att_stmt = {"alg": self.cose_alg, "sig": bytes(sig)}
        else:
            att_stmt = {}
        # canonical order: "fmt" (3) < "attStmt" (7) < "authData" (8)
        att_obj = cbor_encode({"fmt": fmt, "attStmt": att_stmt, "authData": auth_data}) + trailing
        return {
            "id": b64url(self.cred_id), "rawId": b64url(self.cred_id), "type": "public-key",
            "authenticatorAttachment": "cross-platform", "clientExtensionResults": {},
            "response": {"clientDataJSON": b64url(cdj), "attestationObject": b64url(att_obj),
                         "transports": ["usb"]},
        }

    def assertion(self, challenge, sign_count, origin=ORIGIN, rp_id=RP_ID, flags=FLAG_UP,
                  ctype="webauthn.get", user_handle=None, extensions=None):
        if extensions is not None:
            flags |= FLAG_ED
        auth_data = sha256(rp_id.encode()) + bytes([flags]) + sign_count.to_bytes(4, "big")
        if extensions is not None:
            auth_data += cbor_encode(extensions)
        cdj = client_data_json(ctype, challenge, origin)
        sig = self.sign(auth_data + sha256(cdj))
        return {
            "id": b64url(self.cred_id), "rawId": b64url(self.cred_id), "type": "public-key",
            "authenticatorAttachment": "cross-platform", "clientExtensionResults": {},
            "response": {"clientDataJSON": b64url(cdj), "authenticatorData": b64url(auth_data),
                         "signature": b64url(sig),
                         "userHandle": b64url(user_handle) if user_handle is not None else None},
        }


# ---- second external source: python-fido2's data classes ---------------------

class Fido2BuiltAuthenticator:
    """Credentials assembled with python-fido2's WebAuthn data classes and its
    CTAP2 CBOR encoder (python-fido2 has no software authenticator); keys and
    signatures from cryptography."""

    AAGUID = bytes.fromhex("f1d0f1d0f1d04000800000000000d2d2")

    def __init__(self, alg="EdDSA"):
        self.alg = alg
        if alg == "ES256":
            self.key = ec.generate_private_key(ec.SECP256R1())
            self.cose = CoseES256.from_cryptography_key(self.key.public_key())
        else:
            self.key = ed25519.Ed25519PrivateKey.generate()
            self.cose = CoseEdDSA.from_cryptography_key(self.key.public_key())
        self.cred_id = os.urandom(24)

    def sign(self, data):
        if self.alg == "ES256":
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        return self.key.sign(data)

    def registration(self, challenge, fmt="packed", flags=AuthenticatorData.FLAG.UP, extensions=None):
        acd = AttestedCredentialData.create(self.AAGUID, self.cred_id, self.cose)
        if extensions is not None:
            flags |= AuthenticatorData.FLAG.ED
        ad = AuthenticatorData.create(sha256(RP_ID.encode()), flags | AuthenticatorData.FLAG.AT, 0, acd,
                                      extensions)
        cd = CollectedClientData.create(type=CollectedClientData.TYPE.CREATE, challenge=challenge,
                                        origin=ORIGIN)
        stmt = {"alg": self.cose.ALGORITHM, "sig": self.sign(ad + cd.hash)} if fmt == "packed" else {}
        ao = AttestationObject.create(fmt, ad, stmt)
        resp = RegistrationResponse(
            raw_id=self.cred_id,
            response=AuthenticatorAttestationResponse(client_data=cd, attestation_object=ao),
            authenticator_attachment=AuthenticatorAttachment.CROSS_PLATFORM)
        return json.loads(json.dumps(dict(resp)))

    def assertion(self, challenge, sign_count, flags=AuthenticatorData.FLAG.UP, extensions=None):
        if extensions is not None:
            flags |= AuthenticatorData.FLAG.ED
        ad = AuthenticatorData.create(sha256(RP_ID.encode()), flags, sign_count, b"", extensions)
        cd = CollectedClientData.create(type=CollectedClientData.TYPE.GET, challenge=challenge,
                                        origin=ORIGIN)
        resp = AuthenticationResponse(
            raw_id=self.cred_id,
            response=AuthenticatorAssertionResponse(client_data=cd, authenticator_data=ad,
                                                    signature=self.sign(ad + cd.hash)),
            authenticator_attachment=AuthenticatorAttachment.CROSS_PLATFORM)
        return json.loads(json.dumps(dict(resp)))


# ---- the two oracles (py_webauthn, python-fido2) ------------------------------

def fido2_attestation_verifier(expected_fmt):
    """verify_attestation for Fido2Server: python-fido2's own packed / none
    verifiers; packed must be *self* attestation (no x5c)."""
    def verify(attestation_object, client_data_hash):
        if attestation_object.fmt != expected_fmt:
            raise ValueError(f"fmt {attestation_object.fmt!r}, expected {expected_fmt!r}")
        verifier = PackedAttestation() if expected_fmt == "packed" else NoneAttestation()
        result = verifier.verify(attestation_object.att_stmt, attestation_object.auth_data,
                                 client_data_hash)
        want = AttestationType.SELF if expected_fmt == "packed" else AttestationType.NONE
        if result.attestation_type != want:
            raise ValueError(f"attestation type {result.attestation_type!r}, expected {want!r}")
    return verify


def fido2_server(fmt="packed"):
    return Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="TokenMint interop"),
                       attestation=AttestationConveyancePreference.DIRECT,
                       verify_attestation=fido2_attestation_verifier(fmt))


def fido2_state(challenge, require_uv=False):
    """The state dict Fido2Server.register_begin/authenticate_begin would
    return (python-fido2 2.x layout), made by hand for a given challenge."""
    return {"challenge": b64url(challenge),
            "user_verification": UserVerificationRequirement.REQUIRED if require_uv else None}


def oracle_reg(oracle, cred, challenge, origin=ORIGIN, require_uv=False, fmt="packed"):
    """Run a registration through py_webauthn or python-fido2; returns
    (credential_public_key COSE bytes, sign_count) or raises."""
    if oracle == "py_webauthn":
        v = webauthn.verify_registration_response(
            credential=json.dumps(cred), expected_challenge=challenge, expected_origin=origin,
            expected_rp_id=RP_ID, require_user_verification=require_uv)
        return v.credential_public_key, v.sign_count
    ad = fido2_server(fmt).register_complete(fido2_state(challenge, require_uv), cred)
    return ad.credential_data, ad.counter


def oracle_assert(oracle, cred, challenge, public_key, current, origin=ORIGIN, require_uv=False):
    """Run an assertion through py_webauthn (public_key: COSE bytes) or
    python-fido2 (public_key: AttestedCredentialData); returns the new count."""
    if oracle == "py_webauthn":
        v = webauthn.verify_authentication_response(
            credential=json.dumps(cred), expected_challenge=challenge, expected_origin=origin,
            expected_rp_id=RP_ID, credential_public_key=public_key,
            credential_current_sign_count=current, require_user_verification=require_uv)
        return v.new_sign_count
    fido2_server().authenticate_complete(fido2_state(challenge, require_uv), [public_key], cred)
    n = AuthenticationResponse.from_dict(cred).response.authenticator_data.counter
    if (n or current) and n <= current:  # python-fido2 leaves the counter to the RP
        raise ValueError(f"signCount {n} not above {current}")
    return n


def refused(fn, *args, **kwargs):
    """True when a verifier raised (any exception is a refusal)."""
    try:
        fn(*args, **kwargs)
    except Exception:
        return True
    return False


# ---- the negative cases of group C (built once, used by S and C) -------------

def registration_negatives():
    """(label, registration JSON, expected challenge, require_uv, oracle that
    must refuse it). Each has its own fresh credential, so a refusal can't be
    about a duplicate id; each has exactly one defect."""
    cases = []

    def add(label, build, require_uv=False, oracle="py_webauthn"):
        a = HandAuthenticator("ES256")
        ch = new_challenge()
        cases.append((label, build(a, ch), ch, require_uv, oracle, a))

    add("registration with BE=0, BS=1",
        lambda a, ch: a.registration(ch, flags=FLAG_UP | FLAG_BS))
    add("registration with a byte after the attestationObject",
        lambda a, ch: a.registration(ch, trailing=b"\x00"), oracle="python-fido2")
    add("registration with a non-minimal CBOR length in the COSE key",
        lambda a, ch: a.registration(ch, nonminimal_cose=True))
    add("registration with a bad packed self-attestation signature",
        lambda a, ch: a.registration(ch, bad_att_sig=True))
    add(f"registration from another origin ({OTHER_ORIGIN})",
        lambda a, ch: a.registration(ch, origin=OTHER_ORIGIN))
    add(f"registration from a subdomain origin ({SUBDOMAIN_ORIGIN})",
        lambda a, ch: a.registration(ch, origin=SUBDOMAIN_ORIGIN))
    add(f"registration for another rpId ({OTHER_RP_ID})",
        lambda a, ch: a.registration(ch, rp_id=OTHER_RP_ID))
    add("registration for another challenge",
        lambda a, ch: a.registration(new_challenge()))
    add("registration with clientData type webauthn.get",
        lambda a, ch: a.registration(ch, ctype="webauthn.get"))
    add("registration without UP",
        lambda a, ch: a.registration(ch, flags=0, fmt="none"))
    add("registration without UV under --require-uv",
        lambda a, ch: a.registration(ch), require_uv=True)
    return cases


def assertion_negatives(a, current, last_accepted, last_challenge):
    """(label, assertion JSON, expected challenge, require_uv, oracle) for a
    credential whose stored signCount is `current`. Except for the counter
    cases, each uses a count above `current`, so its one defect is the only
    reason to refuse it."""
    counts = iter(range(current + 10, current + 100))
    cases = []

    def add(label, build, require_uv=False, oracle="py_webauthn"):
        ch = new_challenge()
        cases.append((label, build(ch, next(counts)), ch, require_uv, oracle))

    cases.append(("replayed assertion (the accepted one, again)", last_accepted, last_challenge,
                  False, "py_webauthn"))
    add("new assertion with the same signCount", lambda ch, n: a.assertion(ch, current))
    add("new assertion with a lower signCount", lambda ch, n: a.assertion(ch, current - 1))
    add("tampered signature (one byte flipped)",
        lambda ch, n: flipped(a.assertion(ch, n), "signature", SIG_FLIP_INDEX))
    add("tampered authenticatorData (one byte flipped)",
        lambda ch, n: flipped(a.assertion(ch, n), "authenticatorData", AUTHDATA_FLIP_INDEX))
    add(f"wrong origin ({OTHER_ORIGIN})", lambda ch, n: a.assertion(ch, n, origin=OTHER_ORIGIN))
    add(f"subdomain origin ({SUBDOMAIN_ORIGIN})",
        lambda ch, n: a.assertion(ch, n, origin=SUBDOMAIN_ORIGIN))
    add(f"http origin (http://{RP_ID})", lambda ch, n: a.assertion(ch, n, origin=f"http://{RP_ID}"))
    add(f"wrong rpId ({OTHER_RP_ID})", lambda ch, n: a.assertion(ch, n, rp_id=OTHER_RP_ID))
    add("wrong challenge", lambda ch, n: a.assertion(new_challenge(), n))
    add("clientData type webauthn.create", lambda ch, n: a.assertion(ch, n, ctype="webauthn.create"))
    add("BE=0, BS=1", lambda ch, n: a.assertion(ch, n, flags=FLAG_UP | FLAG_BS))
    add("UP flag clear", lambda ch, n: a.assertion(ch, n, flags=0))
    add("no UV under --require-uv", lambda ch, n: a.assertion(ch, n), require_uv=True)
    add("unknown credential id", lambda ch, n: HandAuthenticator("ES256").assertion(ch, 1),
        oracle="python-fido2")
    return cases


# ---- TokenMint CLI -------------------------------------------------------------

_file_counter = [0]


def tm(*args):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True, timeout=120)


def tail(p):
    return " | ".join(p.stderr.strip().splitlines()[-3:])[-400:]


def tm_json(*args):
    p = tm(*args)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p)}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` printed no JSON: {p.stdout[:200]!r}")


# base64url values can start with "-", which an argument parser takes for an
# option: they are always passed as --name=value.

# extra: more options (the extensions); run=tm gives the CompletedProcess
# instead of the parsed JSON, for the calls that must fail.

def tm_register(store, challenge, alg="ES256", attestation="none", resident=False, uv=False,
                user_id=b"user-01", user_name="alice", extra=(), run=tm_json):
    args = ["fido2", "register", "--store", store, "--rp", RP_ID, "--origin", ORIGIN,
            "--user-id", user_id.hex(), "--user-name", user_name, f"--challenge={b64url(challenge)}",
            "--alg", alg, "--attestation", attestation]
    args += ["--resident"] if resident else []
    args += ["--uv"] if uv else []
    return run(*args, *extra)


def tm_assert(store, challenge, credential=None, uv=False, prf=(), cred_blob=False, run=tm_json):
    args = ["fido2", "assert", "--store", store, "--rp", RP_ID, "--origin", ORIGIN,
            f"--challenge={b64url(challenge)}"]
    args += [f"--credential={credential}"] if credential else []
    args += ["--uv"] if uv else []
    args += [f"--prf={b64url(x)}" for x in prf]
    args += ["--cred-blob"] if cred_blob else []
    return run(*args)


def tm_verify(kind, store, cred, challenge, origin=ORIGIN, require_uv=False, inline=False):
    """kind: registration | assertion. Returns the CompletedProcess."""
    args = ["fido2", f"verify-{kind}", "--store", store, "--rp", RP_ID, "--origin", origin,
            f"--challenge={b64url(challenge)}"]
    args += ["--require-uv"] if require_uv else []
    if inline:
        args.append(json.dumps(cred))
    else:
        _file_counter[0] += 1
        path = os.path.join(os.path.dirname(store), f"in-{_file_counter[0]}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cred, f)
        args += ["--in", path]
    return tm(*args)


def expect_accepted(p, what):
    if p.returncode != 0:
        raise Fail(f"{what} refused (exit {p.returncode}): {tail(p)}")
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise Fail(f"{what}: accepted but printed no JSON: {p.stdout[:200]!r}")


def expect_refused(p, what, reason=None):
    if p.returncode == 0:
        raise Fail(f"{what} was accepted: {p.stdout.strip()[:200]}")
    if p.returncode != 1:
        raise Fail(f"{what}: exit {p.returncode}, expected 1: {tail(p)}")
    expect(p.stderr.strip(), f"{what}: refused without a reason on stderr")
    expect(reason is None or reason in p.stderr, f"{what}: refused, but not with {reason}: {tail(p)}")


def expect_cli_error(p, what, reason):
    """An authenticator-side call (register / assert) that must fail."""
    if p.returncode == 0:
        raise Fail(f"{what} succeeded: {p.stdout.strip()[:200]}")
    expect(reason in p.stderr, f"{what}: exit {p.returncode}, but not with {reason}: {tail(p)}")


# ---- shape checks of TokenMint's authenticator output ---------------------------

def check_b64(obj, keys, where):
    for k in keys:
        v = obj.get(k)
        expect(isinstance(v, str) and B64URL_UNPADDED.match(v),
               f"{where}.{k} is not unpadded base64url: {v!r}")


def check_common_shape(j):
    expect(isinstance(j, dict), "output is not a JSON object")
    check_b64(j, ["id", "rawId"], "credential")
    expect(j["id"] == j["rawId"], "id != rawId")
    expect(j.get("type") == "public-key", f"type {j.get('type')!r}")
    expect(j.get("authenticatorAttachment") == "cross-platform",
           f"authenticatorAttachment {j.get('authenticatorAttachment')!r}")
    expect(j.get("clientExtensionResults") == {},
           f"clientExtensionResults {j.get('clientExtensionResults')!r}")
    expect(isinstance(j.get("response"), dict), "no response object")


def check_client_data(cdj_b64, ctype, challenge):
    raw = b64d(cdj_b64)
    prefix = client_data_json(ctype, challenge, ORIGIN)[:-len(',"crossOrigin":false}')]
    expect(raw.startswith(prefix), f"clientDataJSON is not in the §5.8.1.1 form: {raw[:160]!r}")
    cd = json.loads(raw)
    expect(cd.get("crossOrigin", False) is False, f"crossOrigin {cd.get('crossOrigin')!r}")


def check_registration_output(reg, alg, attestation, challenge, uv=False):
    """Shape, clientDataJSON, canonical CBOR and content of `fido2 register`."""
    check_common_shape(reg)
    r = reg["response"]
    check_b64(r, ["clientDataJSON", "attestationObject"], "response")
    expect(r.get("transports") == ["usb"], f"transports {r.get('transports')!r}")
    check_client_data(r["clientDataJSON"], "webauthn.create", challenge)
    try:
        att = cbor_decode(b64d(r["attestationObject"]))
    except CborError as e:
        raise Fail(f"attestationObject is not CTAP2-canonical CBOR: {e}")
    expect(isinstance(att, dict) and list(att) == ["fmt", "attStmt", "authData"],
           f"attestationObject members {list(att) if isinstance(att, dict) else att!r}")
    expect(att["fmt"] == attestation, f"fmt {att['fmt']!r}, expected {attestation!r}")
    if attestation == "none":
        expect(att["attStmt"] == {}, f"none attStmt not empty: {att['attStmt']!r}")
    else:
        expect(sorted(att["attStmt"]) == ["alg", "sig"], f"packed attStmt members {sorted(att['attStmt'])}"
               " (self attestation: alg and sig, no x5c)")
        expect(att["attStmt"]["alg"] == COSE_ALG[alg], f"attStmt alg {att['attStmt']['alg']}")
    ad = parse_auth_data(att["authData"])
    expect(ad["rpIdHash"] == sha256(RP_ID.encode()), "rpIdHash is not SHA-256 of the rpId")
    expect(ad["flags"] & FLAG_UP, "UP flag clear")
    expect(ad["flags"] & FLAG_AT, "AT flag clear")
    expect(bool(ad["flags"] & FLAG_UV) == uv, f"UV flag {'clear' if uv else 'set'} (--uv {uv})")
    expect(ad["credentialId"] == b64d(reg["rawId"]), "credential id in authData != rawId")
    key = ad["coseKey"]
    if alg == "ES256":
        expect(sorted(key) == [-3, -2, -1, 1, 3] and key[1] == 2 and key[3] == -7 and key[-1] == 1
               and len(key[-2]) == 32 and len(key[-3]) == 32, f"ES256 COSE key {key!r}")
    else:
        expect(sorted(key) == [-2, -1, 1, 3] and key[1] == 1 and key[3] == -8 and key[-1] == 6
               and len(key[-2]) == 32, f"EdDSA COSE key {key!r}")
    return ad


def check_assertion_output(asr, challenge, cred_id, user_handle):
    check_common_shape(asr)
    r = asr["response"]
    check_b64(r, ["clientDataJSON", "authenticatorData", "signature"], "response")
    expect(asr["id"] == cred_id, f"assertion for credential {asr['id']}, expected {cred_id}")
    check_client_data(r["clientDataJSON"], "webauthn.get", challenge)
    expect("userHandle" in r, "response.userHandle missing (null expected for non-resident)")
    want = b64url(user_handle) if user_handle is not None else None
    expect(r["userHandle"] == want, f"userHandle {r['userHandle']!r}, expected {want!r}")
    ad = parse_auth_data(b64d(r["authenticatorData"]))
    expect(not ad["flags"] & FLAG_AT, "AT flag set in an assertion")
    return ad


# ---- group S: the script's own building blocks ---------------------------------

RFC8949_VECTORS = [  # RFC 8949 Appendix A
    (0, "00"), (1, "01"), (10, "0a"), (23, "17"), (24, "1818"), (25, "1819"), (100, "1864"),
    (1000, "1903e8"), (1000000, "1a000f4240"), (1000000000000, "1b000000e8d4a51000"),
    (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"),
    (False, "f4"), (True, "f5"), (None, "f6"),
    (b"", "40"), (bytes.fromhex("01020304"), "4401020304"),
    ("", "60"), ("a", "6161"), ("IETF", "6449455446"), ("\"\\", "62225c"), ("\u00fc", "62c3bc"),
    ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
    ({}, "a0"), ({1: 2, 3: 4}, "a201020304"), ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
    (["a", {"b": "c"}], "826161a161626163"),
]


def check_s_cbor():
    for value, hexed in RFC8949_VECTORS:
        got = cbor_encode(value).hex()
        expect(got == hexed, f"encode {value!r}: {got}, RFC 8949 says {hexed}")
        back = cbor_decode(bytes.fromhex(hexed))
        expect(back == value and type(back) is type(value), f"decode {hexed}: {back!r}")
    # CTAP2 order across major types and lengths, against python-fido2's encoder
    mixed = {"fmt": "none", 24: b"x", -1: 1, 1: 2, "attStmt": {}, -25: 0, "authData": b"\x00", 3: -7}
    expect(cbor_encode(mixed) == fido2_cbor.encode(mixed), "mixed map differs from python-fido2's encoder")
    for alg in ("ES256", "EdDSA"):
        a = HandAuthenticator(alg)
        expect(a.cose_key() == fido2_cbor.encode(a.cose_map()), f"{alg} COSE key differs from python-fido2's")
    enc = cbor_encode({"authData": b"\x01", "fmt": "none", "attStmt": {}})
    expect(enc.startswith(bytes.fromhex("a3") + b"\x63fmt\x64none\x67attStmt\xa0\x68authData"),
           f"attestationObject key order: {enc.hex()}")
    x = HandAuthenticator("ES256")
    nm = x.cose_key(nonminimal=True)
    expect(len(nm) == len(x.cose_key()) + 1 and bytes.fromhex("590020") in nm, "non-minimal COSE key")
    expect(fido2_cbor.decode(nm) == x.cose_map(), "python-fido2 reads the non-minimal key differently")
    # the strict decoder refuses what CTAP2 forbids
    bad = {"non-minimal uint": "1817", "non-minimal length": "590001ff", "indefinite": "9fff",
           "unsorted keys": "a203040102", "duplicate keys": "a201020103", "trailing byte": "0000",
           "float": "f93c00", "tag": "c11a514b67b0", "truncated": "5820", "reserved ai": "1c"}
    for what, hexed in bad.items():
        expect(refused(cbor_decode, bytes.fromhex(hexed)), f"strict decoder accepted {what} ({hexed})")
    expect(refused(cbor_decode, nm), "strict decoder accepted the non-minimal COSE key")


def check_s_registrations():
    for alg in ("ES256", "EdDSA"):
        for fmt in ("packed", "none"):
            a = HandAuthenticator(alg)
            ch = new_challenge()
            reg = a.registration(ch, fmt=fmt)
            check_registration_output(reg, alg, fmt, ch)  # the shape checks of A hold for it too
            v = webauthn.verify_registration_response(
                credential=json.dumps(reg), expected_challenge=ch, expected_origin=ORIGIN,
                expected_rp_id=RP_ID)
            expect(v.fmt == fmt and v.credential_id == a.cred_id and v.sign_count == 0,
                   f"py_webauthn: {alg}/{fmt} fmt {v.fmt}, count {v.sign_count}")
            expect(v.credential_public_key == a.cose_key(), f"py_webauthn: {alg} COSE key differs")
            ad = fido2_server(fmt).register_complete(fido2_state(ch), reg)
            expect(ad.credential_data.credential_id == a.cred_id
                   and ad.credential_data.public_key.ALGORITHM == COSE_ALG[alg],
                   f"python-fido2: {alg}/{fmt} credential data")
    # flags of credential B in group C: UV, BE, BS
    a = HandAuthenticator("ES256")
    ch = new_challenge()
    reg = a.registration(ch, fmt="none", flags=FLAG_UP | FLAG_UV | FLAG_BE | FLAG_BS)
    v = webauthn.verify_registration_response(credential=json.dumps(reg), expected_challenge=ch,
                                              expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                              require_user_verification=True)
    expect(v.user_verified and v.credential_backed_up, "py_webauthn: UV/BE/BS registration")


def check_s_assertions():
    a = HandAuthenticator("ES256")
    ch = new_challenge()
    reg = a.registration(ch)
    cose, count = oracle_reg("py_webauthn", reg, ch)
    cred_data, _ = oracle_reg("python-fido2", reg, ch)
    for n in (1, 2, 5):
        ch = new_challenge()
        asr = a.assertion(ch, n)
        expect(oracle_assert("py_webauthn", asr, ch, cose, count) == n, f"py_webauthn count {n}")
        expect(oracle_assert("python-fido2", asr, ch, cred_data, count) == n, f"python-fido2 count {n}")
        count = n
    ch = new_challenge()
    asr = a.assertion(ch, 6, flags=FLAG_UP | FLAG_UV, user_handle=b"user-01")
    oracle_assert("py_webauthn", asr, ch, cose, count, require_uv=True)
    oracle_assert("python-fido2", asr, ch, cred_data, count, require_uv=True)


def check_s_negatives():
    """Every bad object of group C is refused by an oracle, and the same
    builder without the defect is accepted by it (done in the checks above)."""
    for label, reg, ch, require_uv, oracle, _ in registration_negatives():
        expect(refused(oracle_reg, oracle, reg, ch, require_uv=require_uv),
               f"{oracle} accepted the '{label}' case")
    a = HandAuthenticator("ES256")
    ch = new_challenge()
    reg = a.registration(ch)
    cose, _ = oracle_reg("py_webauthn", reg, ch)
    cred_data, _ = oracle_reg("python-fido2", reg, ch)
    ch5 = new_challenge()
    last = a.assertion(ch5, 5)
    oracle_assert("py_webauthn", last, ch5, cose, 2)
    for label, asr, ch, require_uv, oracle in assertion_negatives(a, 5, last, ch5):
        key = cose if oracle == "py_webauthn" else cred_data
        expect(refused(oracle_assert, oracle, asr, ch, key, 5, require_uv=require_uv),
               f"{oracle} accepted the '{label}' case")
    # the counter cases differ from a good assertion only in the count
    ch = new_challenge()
    oracle_assert("py_webauthn", a.assertion(ch, 6), ch, cose, 5)


def check_s_fido2_built():
    for alg, fmt in (("EdDSA", "packed"), ("ES256", "none")):
        f = Fido2BuiltAuthenticator(alg)
        ch = new_challenge()
        reg = f.registration(ch, fmt=fmt)
        check_registration_output_external(reg)
        cose, count = oracle_reg("py_webauthn", reg, ch)
        for n in (1, 2):
            ch = new_challenge()
            count = oracle_assert("py_webauthn", f.assertion(ch, n), ch, cose, count)
            expect(count == n, f"python-fido2-built {alg} assertion count {count}")


def check_registration_output_external(reg):
    """The fido2-built JSON has the toJSON() shape too (no transports)."""
    check_common_shape(reg)
    att = cbor_decode(b64d(reg["response"]["attestationObject"]))
    parse_auth_data(att["authData"])


# ---- group A: TokenMint authenticator -> py_webauthn ------------------------------

def a_register(ctx, alg, attestation, tmp):
    store = os.path.join(tmp, f"a-{alg}-{attestation}", "store")
    os.makedirs(store)
    ch = new_challenge()
    reg = tm_register(store, ch, alg=alg, attestation=attestation)
    ctx.update(store=store, reg=reg, challenge=ch)
    try:
        v = webauthn.verify_registration_response(credential=json.dumps(reg), expected_challenge=ch,
                                                  expected_origin=ORIGIN, expected_rp_id=RP_ID)
    except WebAuthnException as e:
        raise Fail(f"py_webauthn refused it: {e}")
    expect(v.fmt == attestation, f"py_webauthn saw fmt {v.fmt}")
    expect(v.credential_id == b64d(reg["rawId"]), "py_webauthn credential id != rawId")
    expect(decode_credential_public_key(v.credential_public_key).alg == COSE_ALG[alg],
           "py_webauthn: wrong key alg")
    expect(not v.user_verified, "UV set without --uv")
    ctx.update(key=v.credential_public_key, count=v.sign_count)


def a_shape(ctx, alg, attestation):
    """Separate from the py_webauthn check, so that a strictness finding here
    does not hide the interop results."""
    expect("reg" in ctx, "no registration output")
    check_registration_output(ctx["reg"], alg, attestation, ctx["challenge"])


def a_assert(ctx, n=3):
    expect("key" in ctx, "no credential (registration check failed)")
    for i in range(n):
        ch = new_challenge()
        asr = tm_assert(ctx["store"], ch, credential=ctx["reg"]["id"])
        check_assertion_output(asr, ch, ctx["reg"]["id"], None)
        try:
            new = webauthn.verify_authentication_response(
                credential=json.dumps(asr), expected_challenge=ch, expected_origin=ORIGIN,
                expected_rp_id=RP_ID, credential_public_key=ctx["key"],
                credential_current_sign_count=ctx["count"]).new_sign_count
        except WebAuthnException as e:
            raise Fail(f"assertion {i + 1}: py_webauthn refused it: {e}")
        expect(new > ctx["count"], f"assertion {i + 1}: signCount {new} not above {ctx['count']}")
        ctx.update(prev=ctx["count"], count=new, last=asr, last_challenge=ch)


def a_tampered(ctx, field, index):
    expect("last" in ctx, "no accepted assertion to tamper with")
    bad = flipped(ctx["last"], field, index)
    try:
        webauthn.verify_authentication_response(
            credential=json.dumps(bad), expected_challenge=ctx["last_challenge"],
            expected_origin=ORIGIN, expected_rp_id=RP_ID, credential_public_key=ctx["key"],
            credential_current_sign_count=ctx["prev"])
    except WebAuthnException:
        return
    raise Fail(f"py_webauthn accepted the assertion with a flipped {field} byte")


def a_resident_uv(tmp):
    store = os.path.join(tmp, "a-resident", "store")
    os.makedirs(store)
    uid = os.urandom(16)
    ch = new_challenge()
    reg = tm_register(store, ch, alg="ES256", attestation="packed", resident=True, uv=True,
                      user_id=uid, user_name="carol")
    reg_challenge = ch
    v = webauthn.verify_registration_response(credential=json.dumps(reg), expected_challenge=ch,
                                              expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                              require_user_verification=True)
    expect(v.user_verified, "py_webauthn: registration not user-verified")
    ch = new_challenge()
    asr = tm_assert(store, ch, uv=True)  # no --credential: the discoverable credential
    check_assertion_output(asr, ch, reg["id"], uid)
    count = webauthn.verify_authentication_response(
        credential=json.dumps(asr), expected_challenge=ch, expected_origin=ORIGIN,
        expected_rp_id=RP_ID, credential_public_key=v.credential_public_key,
        credential_current_sign_count=v.sign_count, require_user_verification=True).new_sign_count
    expect(count > v.sign_count, f"signCount {count} not above {v.sign_count}")
    ch = new_challenge()
    asr = tm_assert(store, ch, credential=reg["id"])  # no --uv
    check_assertion_output(asr, ch, reg["id"], uid)
    kwargs = dict(credential=json.dumps(asr), expected_challenge=ch, expected_origin=ORIGIN,
                  expected_rp_id=RP_ID, credential_public_key=v.credential_public_key,
                  credential_current_sign_count=count)
    expect(refused(webauthn.verify_authentication_response, require_user_verification=True, **kwargs),
           "an assertion made without --uv passed require_user_verification")
    expect(webauthn.verify_authentication_response(**kwargs).new_sign_count > count,
           "signCount did not increase")
    check_registration_output(reg, "ES256", "packed", reg_challenge, uv=True)


# ---- group B: TokenMint authenticator -> python-fido2 ------------------------------

def check_b(alg, attestation, uv, tmp):
    store = os.path.join(tmp, f"b-{alg}-{attestation}", "store")
    os.makedirs(store)
    uvreq = UserVerificationRequirement.REQUIRED if uv else UserVerificationRequirement.DISCOURAGED
    server = fido2_server(attestation)
    uid = os.urandom(16)
    user = PublicKeyCredentialUserEntity(id=uid, name="bob", display_name="Bob")
    options, state = server.register_begin(user, user_verification=uvreq, challenge=new_challenge())
    reg = tm_register(store, options.public_key.challenge, alg=alg, attestation=attestation, uv=uv,
                      user_id=uid, user_name="bob")
    try:
        auth_data = server.register_complete(state, reg)
    except Exception as e:
        raise Fail(f"register_complete refused it: {type(e).__name__}: {e}")
    cred = auth_data.credential_data
    expect(cred.credential_id == b64d(reg["rawId"]), "credential id != rawId")
    expect(cred.public_key.ALGORITHM == COSE_ALG[alg], f"key alg {cred.public_key.ALGORITHM}")
    expect(auth_data.is_user_verified() == uv, f"UV flag {auth_data.is_user_verified()} (--uv {uv})")
    count, creds = auth_data.counter, [cred]
    for i in range(3):
        options, state = server.authenticate_begin(creds, user_verification=uvreq)
        asr = tm_assert(store, options.public_key.challenge, credential=reg["id"], uv=uv)
        try:
            got = server.authenticate_complete(state, creds, asr)
        except Exception as e:
            raise Fail(f"assertion {i + 1}: authenticate_complete refused it: {type(e).__name__}: {e}")
        expect(got.credential_id == cred.credential_id, "authenticated another credential")
        n = AuthenticationResponse.from_dict(asr).response.authenticator_data.counter
        expect(n > count, f"assertion {i + 1}: signCount {n} not above {count}")  # fido2 leaves this to us
        count = n
    for field, index in (("signature", SIG_FLIP_INDEX), ("authenticatorData", AUTHDATA_FLIP_INDEX)):
        expect(refused(server.authenticate_complete, state, creds, flipped(asr, field, index)),
               f"authenticate_complete accepted a flipped {field} byte")
    _, fresh_state = server.authenticate_begin(creds, user_verification=uvreq)
    expect(refused(server.authenticate_complete, fresh_state, creds, asr),
           "authenticate_complete accepted a response to an older challenge")
    if uv:
        options, state = server.authenticate_begin(creds, user_verification=uvreq)
        asr = tm_assert(store, options.public_key.challenge, credential=reg["id"])  # no --uv
        expect(refused(server.authenticate_complete, state, creds, asr),
               "an assertion made without --uv passed user_verification=required")


# ---- group C: hand-built credentials -> TokenMint RP -------------------------------

def c_setup(ctx, tmp):
    ctx["store"] = os.path.join(tmp, "c", "store")
    os.makedirs(ctx["store"])
    a = HandAuthenticator("ES256")
    ch = new_challenge()
    reg = a.registration(ch, fmt="packed")
    res = expect_accepted(tm_verify("registration", ctx["store"], reg, ch), "packed self registration")
    check_b64(res, ["credentialId", "publicKey"], "result")
    want = {"credentialId": b64url(a.cred_id), "publicKey": b64url(a.cose_key()), "alg": -7,
            "signCount": 0, "backupEligible": False, "backupState": False, "userVerified": False}
    for k, v in want.items():
        expect(res.get(k) == v, f"result {k} = {res.get(k)!r}, expected {v!r}")
    ctx.update(a=a, count=0)


def c_setup_b(ctx):
    expect("store" in ctx, "no RP store")
    b = HandAuthenticator("ES256")
    ch = new_challenge()
    reg = b.registration(ch, fmt="none", flags=FLAG_UP | FLAG_UV | FLAG_BE | FLAG_BS)
    # the JSON given inline this time, not with --in
    res = expect_accepted(tm_verify("registration", ctx["store"], reg, ch, require_uv=True, inline=True),
                          "none registration with UV, BE, BS")
    want = {"credentialId": b64url(b.cred_id), "publicKey": b64url(b.cose_key()), "alg": -7,
            "signCount": 0, "backupEligible": True, "backupState": True, "userVerified": True}
    for k, v in want.items():
        expect(res.get(k) == v, f"result {k} = {res.get(k)!r}, expected {v!r}")
    ch = new_challenge()
    asr = b.assertion(ch, 1, flags=FLAG_UP | FLAG_UV | FLAG_BE | FLAG_BS, user_handle=b"user-02")
    res = expect_accepted(tm_verify("assertion", ctx["store"], asr, ch, require_uv=True),
                          "UV assertion under --require-uv")
    expect(res.get("userVerified") is True and res.get("signCount") == 1, f"result {res}")


def c_assertions(ctx):
    expect("a" in ctx, "no credential (registration was refused)")
    a = ctx["a"]
    for n in (1, 2, 5):
        ch = new_challenge()
        asr = a.assertion(ch, n)
        res = expect_accepted(tm_verify("assertion", ctx["store"], asr, ch), f"assertion with signCount {n}")
        want = {"credentialId": b64url(a.cred_id), "signCount": n, "userVerified": False}
        for k, v in want.items():
            expect(res.get(k) == v, f"count {n}: result {k} = {res.get(k)!r}, expected {v!r}")
        ctx.update(count=n, last=asr, last_challenge=ch)


def c_assertion_negative(ctx, asr, ch, require_uv):
    expect(ctx.get("count") == 5, "credential A is not at signCount 5 (the accepting steps failed)")
    expect_refused(tm_verify("assertion", ctx["store"], asr, ch, require_uv=require_uv), "the assertion")


def c_registration_negative(ctx, reg, ch, require_uv):
    expect("store" in ctx, "no RP store")
    expect_refused(tm_verify("registration", ctx["store"], reg, ch, require_uv=require_uv), "the registration")


def c_refused_credential_unknown(ctx, authenticator):
    expect("store" in ctx, "no RP store")
    ch = new_challenge()
    expect_refused(tm_verify("assertion", ctx["store"], authenticator.assertion(ch, 1), ch),
                   "assertion for a credential whose registration was refused")


def c_count_untouched(ctx):
    expect("a" in ctx and ctx.get("count") == 5, "no credential at signCount 5")
    ch = new_challenge()
    res = expect_accepted(tm_verify("assertion", ctx["store"], ctx["a"].assertion(ch, 6), ch),
                          "assertion with signCount 6 after the refused ones")
    expect(res.get("signCount") == 6, f"result {res}")


# ---- group D: python-fido2 data classes -> TokenMint RP -----------------------------

def check_d(alg, fmt, tmp):
    store = os.path.join(tmp, f"d-{alg}-{fmt}", "store")
    os.makedirs(store)
    f = Fido2BuiltAuthenticator(alg)
    ch = new_challenge()
    res = expect_accepted(tm_verify("registration", store, f.registration(ch, fmt=fmt), ch),
                          f"python-fido2-built {alg}/{fmt} registration")
    expect(res.get("credentialId") == b64url(f.cred_id) and res.get("alg") == COSE_ALG[alg]
           and res.get("publicKey") == b64url(fido2_cbor.encode(f.cose)), f"result {res}")
    for n in (1, 2):
        ch = new_challenge()
        res = expect_accepted(tm_verify("assertion", store, f.assertion(ch, n), ch), f"assertion {n}")
        expect(res.get("signCount") == n, f"result {res}")
    ch = new_challenge()
    bad = flipped(f.assertion(ch, 3), "signature", SIG_FLIP_INDEX)
    expect_refused(tm_verify("assertion", store, bad, ch), "assertion with a flipped signature byte")


# ---- group E: extensions, both directions -------------------------------------------

E_BLOB = bytes.fromhex("e0e1e2e3e4e5e6e7e8e9eaebecedeeef")  # 16 bytes: kept (at most 32 are)
E_REG_ARGS = ["--cred-protect", "2", "--prf", "--cred-blob", E_BLOB.hex(), "--min-pin-length",
              "--large-blob", "--cred-props"]
E_REG_EXTENSIONS = {"credProtect": 2, "hmac-secret": True, "credBlob": True, "minPinLength": 4}
E_REG_RESULTS = {"credProps": {"rk": True}, "prf": {"enabled": True}, "largeBlob": {"supported": True}}
PRF_A, PRF_B, PRF_C = b"interop prf input A", b"interop prf input B", b"interop prf input C"
UV_REQUIRED = UserVerificationRequirement.REQUIRED


def strict_eq(got, want):
    """Equal, and of the same types all the way down (True is not 1)."""
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(strict_eq(got[k], v) for k, v in want.items()))
    return type(got) is type(want) and got == want


def auth_data_of(cred):
    """The authenticatorData bytes of a registration (read with py_webauthn's
    CBOR decoder) or of an assertion."""
    r = cred["response"]
    if "attestationObject" in r:
        return parse_cbor(b64d(r["attestationObject"]))["authData"]
    return b64d(r["authenticatorData"])


def fido2_extensions(cred):
    return AuthenticatorData(auth_data_of(cred)).extensions


def prf_outputs(asr):
    results = asr.get("clientExtensionResults", {}).get("prf", {}).get("results", {})
    names = [k for k in ("first", "second") if k in results]
    check_b64(results, names, "clientExtensionResults.prf.results")
    return tuple(b64d(results[k]) for k in names)


def e_store(tmp, name):
    store = os.path.join(tmp, f"e-{name}", "store")
    os.makedirs(store)
    return store


def e_pyw_assert(ctx, asr, ch, require_uv):
    """py_webauthn verifies an assertion of credential ctx["key"]; the count must rise."""
    try:
        new = oracle_assert("py_webauthn", asr, ch, ctx["key"], ctx["count"], require_uv=require_uv)
    except WebAuthnException as e:
        raise Fail(f"py_webauthn refused it: {e}")
    expect(new > ctx["count"], f"signCount {new} not above {ctx['count']}")
    ctx["count"] = new


def e_register(ctx, tmp):
    store = e_store(tmp, "tm")
    uid = os.urandom(16)
    server = fido2_server("packed")
    user = PublicKeyCredentialUserEntity(id=uid, name="erin", display_name="Erin")
    options, state = server.register_begin(user, user_verification=UV_REQUIRED, challenge=new_challenge())
    ch = options.public_key.challenge
    reg = tm_register(store, ch, attestation="packed", resident=True, uv=True, user_id=uid,
                      user_name="erin", extra=E_REG_ARGS)
    ctx.update(store=store, reg=reg, uid=uid, challenge=ch, server=server, state=state)
    try:
        v = webauthn.verify_registration_response(credential=json.dumps(reg), expected_challenge=ch,
                                                  expected_origin=ORIGIN, expected_rp_id=RP_ID,
                                                  require_user_verification=True)
    except WebAuthnException as e:
        raise Fail(f"py_webauthn refused it: {e}")
    ctx.update(key=v.credential_public_key, count=v.sign_count)
    ad = parse_authenticator_data(auth_data_of(reg))
    expect(ad.flags.ed and ad.extensions is not None, "py_webauthn: no extensions (ED flag clear)")
    ext = parse_cbor(ad.extensions)
    expect(strict_eq(ext, E_REG_EXTENSIONS), f"py_webauthn: extensions {ext!r}, expected {E_REG_EXTENSIONS!r}")


def e_register_fido2(ctx):
    expect("state" in ctx, "no registration output")
    try:
        got = ctx["server"].register_complete(ctx["state"], ctx["reg"])
    except Exception as e:
        raise Fail(f"register_complete refused it: {type(e).__name__}: {e}")
    expect(got.is_user_verified(), "UV flag clear")
    ctx["cred_data"] = got.credential_data
    ext = fido2_extensions(ctx["reg"])
    expect(strict_eq(ext, E_REG_EXTENSIONS), f"AuthenticatorData.extensions {ext!r}")


def e_register_output(ctx):
    expect("reg" in ctx, "no registration output")
    reg = ctx["reg"]
    got = reg.get("clientExtensionResults")
    expect(strict_eq(got, E_REG_RESULTS), f"clientExtensionResults {got!r}, expected {E_REG_RESULTS!r}")
    # the rest of the shape as in group A (clientExtensionResults checked just above)
    ad = check_registration_output(dict(reg, clientExtensionResults={}), "ES256", "packed",
                                   ctx["challenge"], uv=True)
    expect(ad["flags"] & FLAG_ED, "ED flag clear")
    expect(strict_eq(ad.get("extensions"), E_REG_EXTENSIONS), f"extensions {ad.get('extensions')!r}")


def e_assert(ctx):
    expect("key" in ctx and "cred_data" in ctx, "no credential (a registration check failed)")
    reg, creds = ctx["reg"], [ctx["cred_data"]]
    for i in range(3):
        options, state = ctx["server"].authenticate_begin(creds, user_verification=UV_REQUIRED)
        ch = options.public_key.challenge
        asr = tm_assert(ctx["store"], ch, credential=reg["id"] if i else None, uv=True,
                        prf=(PRF_A, PRF_B), cred_blob=True)
        check_assertion_output(dict(asr, clientExtensionResults={}), ch, reg["id"], ctx["uid"])
        e_pyw_assert(ctx, asr, ch, require_uv=True)
        try:
            ctx["server"].authenticate_complete(state, creds, asr)
        except Exception as e:
            raise Fail(f"assertion {i + 1}: authenticate_complete refused it: {type(e).__name__}: {e}")
        ctx["asr"] = asr


def e_assert_extensions(ctx):
    expect("asr" in ctx, "no accepted assertion")
    asr = ctx["asr"]
    raw = auth_data_of(asr)
    ext = fido2_extensions(asr)
    expect(isinstance(ext, dict) and sorted(ext) == ["credBlob", "hmac-secret"], f"authData extensions {ext!r}")
    expect(ext["credBlob"] == E_BLOB, f"credBlob {ext['credBlob']!r}, registered {E_BLOB!r}")
    hs = ext["hmac-secret"]
    expect(isinstance(hs, bytes) and len(hs) == 80, f"hmac-secret is {len(hs) if isinstance(hs, bytes) else hs!r}"
           " bytes, expected 80 (16-byte IV + 2 x 32 encrypted)")
    cer = asr.get("clientExtensionResults")
    expect(sorted(cer) == ["getCredBlob", "prf"] and list(cer["prf"]) == ["results"],
           f"clientExtensionResults {cer!r}")
    check_b64(cer, ["getCredBlob"], "clientExtensionResults")
    expect(b64d(cer["getCredBlob"]) == E_BLOB, f"getCredBlob {cer['getCredBlob']!r}")
    outs = prf_outputs(asr)
    expect(len(outs) == 2 and all(len(o) == 32 for o in outs), f"prf results {cer['prf']!r}")
    expect(outs[0] != outs[1], "prf first == second for two different inputs")
    for name, out in zip(("first", "second"), outs):
        for part in (out, out[:16], out[16:]):
            expect(part not in raw, f"prf {name} output (or a half of it) is inside authenticatorData")


def e_prf_outputs(store, credential, *inputs, uv=True):
    """The prf outputs of one `fido2 assert`, with the hmac-secret length checked."""
    asr = tm_assert(store, new_challenge(), credential=credential, uv=uv, prf=inputs)
    outs = prf_outputs(asr)
    expect(len(outs) == len(inputs) and all(len(o) == 32 for o in outs),
           f"{len(inputs)} prf input(s): clientExtensionResults {asr.get('clientExtensionResults')!r}")
    hs = (fido2_extensions(asr) or {}).get("hmac-secret")
    want = 16 + 32 * len(inputs)
    expect(isinstance(hs, bytes) and len(hs) == want,
           f"{len(inputs)} prf input(s): hmac-secret {len(hs) if isinstance(hs, bytes) else hs!r} bytes,"
           f" expected {want}")
    expect(bool(AuthenticatorData(auth_data_of(asr)).flags & FLAG_UV) == uv, f"UV flag (--uv {uv})")
    return outs


def e_prf_same_input(ctx):
    expect("asr" in ctx, "no accepted prf assertion")
    cred = (ctx["store"], ctx["reg"]["id"])
    (a1,), (a2,), (c1,) = (e_prf_outputs(*cred, x) for x in (PRF_A, PRF_A, PRF_C))
    expect(a1 == a2, "the same prf input gave two different outputs")
    expect(c1 != a1, "two different prf inputs gave the same output")
    expect(a1 == prf_outputs(ctx["asr"])[0], "A alone (--credential) != first of the discoverable (A, B) call")
    ctx["prf_a"] = a1


def e_prf_two_inputs(ctx):
    expect("prf_a" in ctx, "no prf output for A alone")
    cred = (ctx["store"], ctx["reg"]["id"])
    (b1,) = e_prf_outputs(*cred, PRF_B)
    first, second = e_prf_outputs(*cred, PRF_A, PRF_B)
    expect(first == ctx["prf_a"], "first of (A, B) != output of A alone")
    expect(second == b1, "second of (A, B) != output of B alone")
    expect(e_prf_outputs(*cred, PRF_B, PRF_A) == (b1, ctx["prf_a"]), "(B, A) != (B alone, A alone)")


def e_prf_uv(tmp):
    store = e_store(tmp, "level1")
    reg = tm_register(store, new_challenge(), extra=["--cred-protect", "1", "--prf"])
    got = reg.get("clientExtensionResults")
    expect(strict_eq(got, {"prf": {"enabled": True}}), f"clientExtensionResults {got!r}")
    ext = fido2_extensions(reg)
    expect(strict_eq(ext, {"credProtect": 1, "hmac-secret": True}), f"authData extensions {ext!r}")
    cred = reg["id"]
    (uv1,), (uv2,) = (e_prf_outputs(store, cred, PRF_A, uv=True) for _ in range(2))
    (no1,), (no2,) = (e_prf_outputs(store, cred, PRF_A, uv=False) for _ in range(2))
    expect(uv1 == uv2 and no1 == no2, "the same input and UV state gave two different outputs")
    expect(uv1 != no1, "the same input gave the same output with and without UV (CredRandomWithUV/WithoutUV)")


def e_cred_protect_2(ctx):
    expect("key" in ctx, "no credential (registration check failed)")
    p = tm_assert(ctx["store"], new_challenge(), run=tm)  # discoverable, no --uv
    expect_cli_error(p, "discoverable assert without --uv", "noCredentials")
    ch = new_challenge()
    asr = tm_assert(ctx["store"], ch, credential=ctx["reg"]["id"])  # no --uv
    expect(not AuthenticatorData(auth_data_of(asr)).flags & FLAG_UV, "UV flag set without --uv")
    e_pyw_assert(ctx, asr, ch, require_uv=False)
    ch = new_challenge()
    e_pyw_assert(ctx, tm_assert(ctx["store"], ch, uv=True), ch, require_uv=True)  # discoverable, --uv


def e_cred_protect_3(tmp):
    store = e_store(tmp, "level3")
    uid, ch = os.urandom(16), new_challenge()
    reg = tm_register(store, ch, resident=True, uv=True, user_id=uid, user_name="frank",
                      extra=["--cred-protect", "3"])
    ext = fido2_extensions(reg)
    expect(strict_eq(ext, {"credProtect": 3}), f"authData extensions {ext!r}")
    ctx = {}
    ctx["key"], ctx["count"] = oracle_reg("py_webauthn", reg, ch, require_uv=True)
    for credential in (None, reg["id"]):
        how = "--credential" if credential else "discoverable"
        p = tm_assert(store, new_challenge(), credential=credential, run=tm)
        expect_cli_error(p, f"{how} assert without --uv", "noCredentials")
        ch = new_challenge()
        asr = tm_assert(store, ch, credential=credential, uv=True)
        check_assertion_output(asr, ch, reg["id"], uid)
        e_pyw_assert(ctx, asr, ch, require_uv=True)


def e_large_blob_needs_resident(tmp):
    p = tm_register(e_store(tmp, "large-blob"), new_challenge(), extra=["--large-blob"], run=tm)
    expect_cli_error(p, "--large-blob without --resident", "invalidOption")


def e_long_blob(tmp):
    store = e_store(tmp, "long-blob")
    ch = new_challenge()
    reg = tm_register(store, ch, extra=["--cred-blob", (b"\xab" * 40).hex(), "--cred-props"])
    got = reg.get("clientExtensionResults")
    expect(strict_eq(got, {"credProps": {"rk": False}}), f"clientExtensionResults {got!r}")
    ext = fido2_extensions(reg)
    expect(strict_eq(ext, {"credBlob": False}), f"authData extensions {ext!r}")
    ctx = {}
    ctx["key"], ctx["count"] = oracle_reg("py_webauthn", reg, ch)
    ch = new_challenge()
    asr = tm_assert(store, ch, credential=reg["id"], cred_blob=True)
    e_pyw_assert(ctx, asr, ch, require_uv=False)
    got = asr.get("clientExtensionResults")
    expect(strict_eq(got, {"getCredBlob": ""}), f"clientExtensionResults {got!r}")
    ext = fido2_extensions(asr)
    expect(strict_eq(ext, {"credBlob": b""}), f"authData extensions {ext!r}")


def e_oracles_accept_reg(reg, ch, require_uv=False, fmt="packed"):
    for oracle in ("py_webauthn", "python-fido2"):
        try:
            oracle_reg(oracle, reg, ch, require_uv=require_uv, fmt=fmt)
        except Exception as e:
            raise Fail(f"{oracle} refused it (so the script is wrong): {type(e).__name__}: {e}")


def e_oracles_accept_assert(reg_ch, reg, asr, ch, count, require_uv=False):
    """py_webauthn and python-fido2 take the assertion for the credential of reg."""
    cose, _ = oracle_reg("py_webauthn", reg, reg_ch)
    cred_data, _ = oracle_reg("python-fido2", reg, reg_ch)
    for oracle, key in (("py_webauthn", cose), ("python-fido2", cred_data)):
        try:
            oracle_assert(oracle, asr, ch, key, count - 1, require_uv=require_uv)
        except Exception as e:
            raise Fail(f"{oracle} refused it (so the script is wrong): {type(e).__name__}: {e}")


def e_hand_registration(ctx, a, tmp):
    ctx["store"] = e_store(tmp, "rp")
    ch = new_challenge()
    reg = a.registration(ch, flags=FLAG_UP | FLAG_UV, extensions={"credProtect": 3, "hmac-secret": True})
    reg["clientExtensionResults"] = {"credProps": {"rk": True}, "prf": {"enabled": True}}
    e_oracles_accept_reg(reg, ch, require_uv=True)
    res = expect_accepted(tm_verify("registration", ctx["store"], reg, ch, require_uv=True), "the registration")
    want = {"credentialId": b64url(a.cred_id), "userVerified": True, "discoverable": True, "prfEnabled": True,
            "extensions": {"credProtect": 3, "hmacSecret": True}}
    for k, v in want.items():
        expect(strict_eq(res.get(k), v), f"result {k} = {res.get(k)!r}, expected {v!r}")
    ctx.update(reg=reg, reg_challenge=ch, count=0)


def e_hand_assertion(ctx, a):
    expect("reg" in ctx, "no credential (registration was refused)")
    blob = b"hand-built credBlob"
    ch = new_challenge()
    asr = a.assertion(ch, 1, flags=FLAG_UP | FLAG_UV, extensions={"credBlob": blob})
    e_oracles_accept_assert(ctx["reg_challenge"], ctx["reg"], asr, ch, 1, require_uv=True)
    res = expect_accepted(tm_verify("assertion", ctx["store"], asr, ch, require_uv=True), "the assertion")
    want = {"signCount": 1, "userVerified": True, "extensions": {"credBlob": blob.hex()}}
    for k, v in want.items():
        expect(strict_eq(res.get(k), v), f"result {k} = {res.get(k)!r}, expected {v!r}")
    ctx["count"] = 1


def e_fido2_built(tmp):
    store = e_store(tmp, "rp-fido2")
    f = Fido2BuiltAuthenticator("EdDSA")
    reg_ch = new_challenge()
    reg = f.registration(reg_ch, extensions={"credBlob": True, "minPinLength": 8})
    reg["clientExtensionResults"] = {"credProps": {"rk": False}}
    e_oracles_accept_reg(reg, reg_ch)
    res = expect_accepted(tm_verify("registration", store, reg, reg_ch), "the registration")
    want = {"credentialId": b64url(f.cred_id), "discoverable": False,
            "extensions": {"credBlob": True, "minPinLength": 8}}
    for k, v in want.items():
        expect(strict_eq(res.get(k), v), f"registration: result {k} = {res.get(k)!r}, expected {v!r}")
    ch = new_challenge()
    asr = f.assertion(ch, 1, extensions={"credBlob": b"", "hmac-secret": os.urandom(48)})
    e_oracles_accept_assert(reg_ch, reg, asr, ch, 1)
    res = expect_accepted(tm_verify("assertion", store, asr, ch), "the assertion")
    want = {"signCount": 1, "extensions": {"credBlob": "", "hmacSecretOutputLength": 48}}
    for k, v in want.items():
        expect(strict_eq(res.get(k), v), f"assertion: result {k} = {res.get(k)!r}, expected {v!r}")


def py_webauthn_verdict(refuses, why):
    return "py_webauthn refuses it too" if refuses else f"py_webauthn accepts it: {why}"


def e_registration_negatives():
    """(label, registration JSON, challenge): a fresh credential each, whose
    one defect is in its extensions; the label says what py_webauthn does."""
    cases = []

    def add(what, why, build):
        a = HandAuthenticator("ES256")
        ch = new_challenge()
        reg = build(a, ch)
        cases.append((f"{what} ({py_webauthn_verdict(refused(oracle_reg, 'py_webauthn', reg, ch), why)})",
                      reg, ch))

    def with_results(a, ch, results):
        reg = a.registration(ch)
        reg["clientExtensionResults"] = results
        return reg

    values = "it does not check extension values"
    add("authData extensions {credProtect: 7}", values,
        lambda a, ch: a.registration(ch, extensions={"credProtect": 7}))
    add("authData extensions {hmac-secret: 32 bytes}, a Boolean at registration", values,
        lambda a, ch: a.registration(ch, extensions={"hmac-secret": b"x" * 32}))
    add("authData extensions {minPinLength: 2}, below 4", values,
        lambda a, ch: a.registration(ch, extensions={"minPinLength": 2}))
    add("authData extensions {credBlob: 4 bytes}, a Boolean at registration", values,
        lambda a, ch: a.registration(ch, extensions={"credBlob": b"blob"}))
    results = "it does not read clientExtensionResults"
    add("clientExtensionResults prf.results.first, a PRF output sent to the RP", results,
        lambda a, ch: with_results(a, ch, {"prf": {"enabled": True,
                                                   "results": {"first": b64url(os.urandom(32))}}}))
    add("clientExtensionResults largeBlob.blob, a large blob sent to the RP", results,
        lambda a, ch: with_results(a, ch, {"largeBlob": {"supported": True, "blob": b64url(os.urandom(16))}}))
    return cases


def e_assertion_negatives(a):
    """(label, assertion JSON, challenge) for the hand-built credential of
    e_hand_registration (UV set, counts well above the accepted one)."""
    cases = []
    counts = iter(range(10, 100))

    def add(what, extensions):
        ch = new_challenge()
        asr = a.assertion(ch, next(counts), flags=FLAG_UP | FLAG_UV, extensions=extensions)
        why = "it does not check extension values"
        verdict = py_webauthn_verdict(refused(oracle_assert, "py_webauthn", asr, ch, a.cose_key(), 1), why)
        cases.append((f"{what} ({verdict})", asr, ch))

    add("authData extensions {credBlob: true}, bytes in an assertion", {"credBlob": True})
    add("authData extensions {hmac-secret: 40 bytes}, not 16 + 32 or 16 + 64", {"hmac-secret": os.urandom(40)})
    add("authData extensions {credProtect: 3}, a registration output", {"credProtect": 3})
    return cases


def e_registration_negative(ctx, reg, ch):
    expect("store" in ctx, "no RP store")
    expect_refused(tm_verify("registration", ctx["store"], reg, ch), "the registration",
                   reason="invalidExtension")


def e_assertion_negative(ctx, asr, ch):
    expect(ctx.get("count") == 1, "the hand-built credential is not at signCount 1 (the accepting steps failed)")
    expect_refused(tm_verify("assertion", ctx["store"], asr, ch, require_uv=True), "the assertion",
                   reason="invalidExtension")


# ---- driver ---------------------------------------------------------------------------


def run_self_tests():
    print("# S: this script's CBOR and hand-built credentials (py_webauthn {webauthn}, python-fido2 {fido2},"
          " cryptography {cryptography})".format(**VERSIONS))
    checks.group("S CBOR encoder/decoder (RFC 8949 vectors, python-fido2's encoder, strictness)", check_s_cbor)
    checks.group("S hand-built registrations verify (py_webauthn, python-fido2)", check_s_registrations)
    checks.group("S hand-built assertions verify with increasing counts", check_s_assertions)
    checks.group("S every group C negative is refused by py_webauthn or python-fido2", check_s_negatives)
    checks.group("S python-fido2-built credentials verify (py_webauthn)", check_s_fido2_built)


def run_cli_checks(tmp):
    print("# A: TokenMint authenticator -> py_webauthn")
    for alg in ("ES256", "EdDSA"):
        for att in ("none", "packed"):
            ctx = {}
            tag = f"A {alg}/{att}"
            checks.group(f"{tag} register, verify_registration_response", a_register, ctx, alg, att, tmp)
            checks.group(f"{tag} register output: toJSON() shape, §5.8.1.1 clientDataJSON, CTAP2-canonical CBOR",
                      a_shape, ctx, alg, att)
            checks.group(f"{tag} 3 assertions, verify_authentication_response, counts rise", a_assert, ctx)
            checks.group(f"{tag} flipped signature byte refused", a_tampered, ctx, "signature", SIG_FLIP_INDEX)
            checks.group(f"{tag} flipped authenticatorData byte refused", a_tampered, ctx,
                      "authenticatorData", AUTHDATA_FLIP_INDEX)
    checks.group("A ES256/packed --resident --uv: discoverable assert, userHandle, UV", a_resident_uv, tmp)

    print("# B: TokenMint authenticator -> python-fido2 Fido2Server")
    for alg, att, uv in (("ES256", "none", False), ("ES256", "packed", True),
                         ("EdDSA", "none", True), ("EdDSA", "packed", False)):
        checks.group(f"B {alg}/{att}{' --uv' if uv else ''} register_complete, 3 x authenticate_complete,"
                  " tampered/stale refused", check_b, alg, att, uv, tmp)

    print("# C: hand-built credentials (cryptography, CTAP2 CBOR) -> TokenMint RP")
    ctx = {}
    checks.group("C verify-registration accepts packed self attestation (ES256)", c_setup, ctx, tmp)
    checks.group("C verify-registration accepts none + UV/BE/BS (inline JSON); UV assertion", c_setup_b, ctx)
    checks.group("C verify-assertion accepts signCount 1, 2, 5", c_assertions, ctx)
    # (built even when the steps above failed, so that every run prints the same checks)
    a = ctx.get("a") or HandAuthenticator("ES256")
    last_challenge = ctx.get("last_challenge") or new_challenge()
    last = ctx.get("last") or a.assertion(last_challenge, 5)
    for label, asr, ch, require_uv, _ in assertion_negatives(a, 5, last, last_challenge):
        checks.group(f"C verify-assertion refuses: {label}", c_assertion_negative, ctx, asr, ch, require_uv)
    trailing_author = None
    for label, reg, ch, require_uv, _, author in registration_negatives():
        checks.group(f"C verify-registration refuses: {label}", c_registration_negative, ctx, reg, ch,
                  require_uv)
        if "after the attestationObject" in label:
            trailing_author = author
    checks.group("C verify-assertion refuses a credential whose registration was refused (trailing bytes)",
              c_refused_credential_unknown, ctx, trailing_author)
    checks.group("C refused assertions left the stored signCount alone (6 accepted after 5)",
              c_count_untouched, ctx)

    print("# D: a second external source")
    print(f"SKIP  D software authenticator: python-fido2 {VERSIONS['fido2']} ships none (its Fido2Client"
          " drives a CTAP device over USB HID or PC/SC); using its WebAuthn data classes and CBOR"
          " encoder to build credentials instead")
    for alg, fmt in (("EdDSA", "packed"), ("ES256", "none")):
        checks.group(f"D python-fido2-built {alg}/{fmt}: verify-registration, 2 assertions, tampered refused",
                  check_d, alg, fmt, tmp)

    print("# E: extensions, both directions")
    ctx = {}
    checks.group("E register --resident --uv --cred-protect 2 --prf --cred-blob (16 bytes) --min-pin-length"
                 " --large-blob --cred-props: verify_registration_response, parse_authenticator_data extensions",
                 e_register, ctx, tmp)
    checks.group("E same registration: python-fido2 register_complete, AuthenticatorData.extensions",
                 e_register_fido2, ctx)
    checks.group("E registration output: clientExtensionResults credProps/prf/largeBlob, shape,"
                 " CTAP2-canonical extensions map", e_register_output, ctx)
    checks.group("E 3 x assert --uv --prf A --prf B --cred-blob: verify_authentication_response (UV required),"
                 " counts rise, authenticate_complete", e_assert, ctx)
    checks.group("E assertion authData (python-fido2): credBlob as registered, hmac-secret 80 bytes;"
                 " getCredBlob; prf outputs not inside authData", e_assert_extensions, ctx)
    checks.group("E prf: the same input gives the same output, another input another one", e_prf_same_input, ctx)
    checks.group("E prf: inputs (A, B) in one call give first == A alone, second == B alone",
                 e_prf_two_inputs, ctx)
    checks.group("E prf: --uv and no --uv give different outputs (--cred-protect 1 credential)", e_prf_uv, tmp)
    checks.group("E credProtect 2: discoverable without --uv refused, --credential without --uv and"
                 " discoverable with --uv verified", e_cred_protect_2, ctx)
    checks.group("E credProtect 3: without --uv refused (discoverable and --credential), with --uv verified"
                 " (require_user_verification)", e_cred_protect_3, tmp)
    checks.group("E --large-blob without --resident refused (invalidOption)", e_large_blob_needs_resident, tmp)
    checks.group("E --cred-blob of 40 bytes accepted, not kept (credBlob false, getCredBlob empty);"
                 " --cred-props rk false", e_long_blob, tmp)
    ctx = {}
    a = HandAuthenticator("ES256")
    checks.group("E hand-built registration, authData {credProtect: 3, hmac-secret: true}, credProps, prf:"
                 " py_webauthn, python-fido2, verify-registration accept, extensions printed",
                 e_hand_registration, ctx, a, tmp)
    checks.group("E hand-built assertion, authData {credBlob: bytes}: py_webauthn, python-fido2,"
                 " verify-assertion accept, credBlob printed", e_hand_assertion, ctx, a)
    checks.group("E python-fido2-built EdDSA: registration {credBlob: false, minPinLength: 8}, assertion"
                 " {credBlob: empty, hmac-secret: 48 bytes}: oracles and TokenMint accept", e_fido2_built, tmp)
    for label, reg, ch in e_registration_negatives():
        checks.group(f"E verify-registration refuses (invalidExtension): {label}", e_registration_negative,
                     ctx, reg, ch)
    for label, asr, ch in e_assertion_negatives(a):
        checks.group(f"E verify-assertion refuses (invalidExtension): {label}", e_assertion_negative,
                     ctx, asr, ch)


def main(argv):
    self_test_only = "--self-test" in argv
    run_self_tests()
    if not self_test_only:
        if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
            checks.fail(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        else:
            with tempfile.TemporaryDirectory(prefix="tokenmint-webauthn-interop-") as tmp:
                run_cli_checks(tmp)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
