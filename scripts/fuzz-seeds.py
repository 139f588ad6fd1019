#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (Fuzz/Corpus/<target>/) and fixtures
(Fuzz/Data/) from the reference vectors in Vectors/ (the JOSE cookbook,
Wycheproof's JWS and JWK files, the W3C WebAuthn vectors).

The output is committed; run this again only when the vectors or a target's
input layout change:  .venv-interop/bin/python scripts/fuzz-seeds.py
"""
import hashlib
import json
import pathlib
import shutil
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from fido2 import cbor

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "Vectors"
CORPUS = ROOT / "Fuzz" / "Corpus"
DATA = ROOT / "Fuzz" / "Data"


def b64u(data: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def chunk(data: bytes) -> bytes:
    return struct.pack(">H", len(data)) + data


seeds: dict[str, list[bytes]] = {}


def add(target: str, data):
    if isinstance(data, str):
        data = data.encode()
    seeds.setdefault(target, []).append(data)


# --- JOSE ---------------------------------------------------------------
cookbook = VECTORS / "jose-cookbook"
public_keys = []
for name in ["jwk/3_1.ec_public_key.json", "jwk/3_3.rsa_public_key.json"]:
    public_keys.append(json.loads((cookbook / name).read_text()))
ed = json.loads((cookbook / "curve25519/jws.json").read_text())["input"]["key"]
public_keys.append({k: v for k, v in ed.items() if k != "d"} | {"kid": "ed25519"})
oct_key = json.loads((cookbook / "jwk/3_5.symmetric_key_mac_computation.json").read_text())

for path in sorted(cookbook.glob("jwk/*.json")):
    add("jwk", path.read_bytes())
    add("json", path.read_bytes())
add("jwk", json.dumps({"keys": public_keys}))

for path in sorted(list(cookbook.glob("jws/*.json")) + list(cookbook.glob("curve25519/jws.json"))
                   + list(cookbook.glob("rfc7797/*.json"))):
    case = json.loads(path.read_text())
    output = case.get("output", {})
    if "compact" in output:
        add("jws-compact", output["compact"])
        add("base64url", output["compact"].split(".")[0])
    for form in ("json", "json_flat"):
        if form in output:
            add("jws-json", json.dumps(output[form]))
    add("json", json.dumps(case["input"].get("key", {})))

for case in json.loads((VECTORS / "wycheproof/json_web_signature_test.json").read_text())["testGroups"]:
    for test in case["tests"][:6]:
        token = test["jws"]
        add("jws-json" if isinstance(token, dict) or token.startswith("{") else "jws-compact",
            token if isinstance(token, str) else json.dumps(token))
for group in json.loads((VECTORS / "wycheproof/json_web_key_test.json").read_text())["testGroups"][:8]:
    for test in group["tests"][:2]:
        for key in ("jwk", "private", "public"):
            if key in test and isinstance(test[key], dict):
                add("jwk", json.dumps(test[key]))

for text in ["", "AA", "AAE", "-_-_", "Zm9vYg", "Zm9vYg==", "YQ", "YR", "_w", "A" * 86]:
    add("base64url", text)
for text in ['{"a":[1,2.5e3,true,false,null,"\\u00e9"]}', '[[[[[]]]]]', '"\\ud83d\\ude00"', '{"":{}}', "-0.0e-0"]:
    add("json", text)

# --- keys ---------------------------------------------------------------
def der_and_pem(private):
    private_der = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
    public = private.public_key()
    public_der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    private_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_der, public_der, private_pem, public_pem


ed_key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
ec_key = ec.derive_private_key(7, ec.SECP256R1())
rsa_key = rsa.generate_private_key(65537, 1024)  # small: a seed, not a key to trust
for selector_base, key in ((0, ed_key), (2, ec_key), (4, rsa_key)):
    private_der, public_der, private_pem, public_pem = der_and_pem(key)
    add("key-import", bytes([selector_base]) + public_der)
    add("key-import", bytes([selector_base + 1]) + private_der)
    add("key-import", bytes([7]) + private_pem)
    add("key-import", bytes([7]) + public_pem)
add("key-import", bytes([8]) + der_and_pem(ed_key)[3])
add("key-import", bytes([9]) + ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                                    serialization.NoEncryption()))
add("key-import", bytes([10]) + rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1))
add("key-import", bytes([11]) + rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                                      serialization.NoEncryption()))

# --- WebAuthn -----------------------------------------------------------
webauthn = json.loads((VECTORS / "webauthn/w3c-webauthn-l3.json").read_text())
root_der = None
for section in webauthn["sections"]:
    values = {block["phase"]: {k: bytes.fromhex(v["hex"]) for k, v in block["values"].items() if isinstance(v, dict)}
              for block in section["blocks"]}
    if "" in values and "attestation_ca_cert" in values[""]:
        root_der = values[""]["attestation_ca_cert"]
        add("key-import", bytes([6]) + root_der)
        continue
    registration, authentication = values.get("Registration"), values.get("Authentication")
    if not registration:
        continue
    attestation = registration["attestationObject"]
    add("cbor", attestation)
    add("authenticator-data", attestation)
    add("client-data", registration["clientDataJSON"])
    add("json", registration["clientDataJSON"])
    add("webauthn-registration", chunk(registration["clientDataJSON"]) + attestation)
    decoded = cbor.decode(attestation)
    auth_data = decoded["authData"]
    add("authenticator-data", auth_data)
    if decoded["attStmt"].get("x5c"):
        add("key-import", bytes([6]) + decoded["attStmt"]["x5c"][0])
    # The COSE key follows rpIdHash(32) flags(1) signCount(4) aaguid(16) idLength(2) id.
    id_length = struct.unpack(">H", auth_data[53:55])[0]
    cose, _ = cbor.decode_from(auth_data[55 + id_length:])
    add("cose-key", cbor.encode(cose))
    add("cbor", cbor.encode(cose))
    if authentication:
        add("authenticator-data", authentication["authenticatorData"])
        add("client-data", authentication["clientDataJSON"])
        add("webauthn-assertion", chunk(attestation) + chunk(authentication["clientDataJSON"])
            + chunk(authentication["authenticatorData"]) + authentication["signature"])

# --- WhitelabelPay ------------------------------------------------------
device = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
public_raw = device.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
import base64
enrolment = f"01/fuzz/{base64.urlsafe_b64encode(public_raw).decode()}/00000000-0000-4000-8000-000000000000"
add("pay-tokens", enrolment)
add("pay-tokens", "01/a1b2c3d4-0000-4000-8000-000000000000/" + b64u(public_raw) + "/ref")
for unsigned, epoch in (("online.abc", 1_800_000_000), ("off.3.17", 1_800_000_100), ("x", 1_799_999_500)):
    signature = device.sign(f"{unsigned}/{epoch}".encode())
    add("pay-tokens", f"02/{unsigned}/{epoch}/{base64.urlsafe_b64encode(signature).decode()}")
    add("pay-tokens", f"02/{unsigned}/{epoch}/{b64u(signature)}")

# --- Aztec --------------------------------------------------------------
for options, payload in ((b"\x01\x00\x00", b"02/online.abc/1800000000/" + b"A" * 86),
                         (b"\x00\x01\x00", b"12345"), (b"\x03\x02\x00", b"\x00\xff binary \x80"),
                         (b"\x02\x03\x1c", "gr\u00fc\u00df".encode()), (b"\x01\x1b\x00", bytes(range(256)))):
    add("aztec", options + payload)

# --- write --------------------------------------------------------------
if CORPUS.exists():
    shutil.rmtree(CORPUS)
for target, items in sorted(seeds.items()):
    folder = CORPUS / target
    folder.mkdir(parents=True)
    for data in items:
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
DATA.mkdir(parents=True, exist_ok=True)
(DATA / "jwks.json").write_text(json.dumps({"keys": public_keys}, indent=1) + "\n")
(DATA / "oct.json").write_text(json.dumps(oct_key, indent=1) + "\n")
(DATA / "attestation-root.der").write_bytes(root_der)
total = sum(len(v) for v in seeds.values())
print(f"{total} seeds for {len(seeds)} targets: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(seeds.items())))
