#!/usr/bin/env python3
"""Writes Vectors/webauthn/attestation-chains.json: packed x5c registrations
whose certificate paths test how a relying party anchors a chain, made with
pyca/cryptography and python-fido2's CBOR (independent of TokenMint).

- "self-signed root inside x5c" (the GHSA-6hxq-p678-4hr2 case): the leaf is
  issued by a self-signed CA that is sent *in x5c*; the relying party trusts
  another root. Only a configured root may anchor a path, so it is refused;
  with the attacker's CA configured as a root it verifies, which shows the
  registration is otherwise valid.
- "intermediate": leaf ← intermediate (in x5c) ← root (configured): accepted;
  the same leaf without the intermediate in x5c: refused.
- "expired leaf": valid only before `validUntil`: accepted with the policy's
  attestation time inside the window, refused at the current time.
- compound attestations (WebAuthn L3 §8.9): two packed statements over the
  same data, accepted when both chains are trusted; one untrusted statement
  refuses the whole.

Run from the repository root: .venv-interop/bin/python scripts/make_attestation_chain_vectors.py
"""
import base64
import datetime
import hashlib
import json
import os
import struct

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from fido2 import cbor

RP_ID = "tokenmint.test"
ORIGIN = "https://tokenmint.test"
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "TokenMint test"),
                      x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Authenticator Attestation")])


def certificate(subject, key, issuer, issuer_key, ca, not_before, not_after):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                                      data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                      encipher_only=False, decipher_only=False), critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


def der(cert):
    return cert.public_bytes(serialization.Encoding.DER)


def registration(leaf_key, chain, extra=()):
    """A packed x5c registration signed by `leaf_key`, with `chain` (DER) as
    x5c; with `extra` ((key, chain) pairs), a compound attestation (WebAuthn
    L3 §8.9) of that statement and one packed statement per pair."""
    credential_key = ec.generate_private_key(ec.SECP256R1())
    numbers = credential_key.public_key().public_numbers()
    cose = cbor.encode({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
    credential_id = os.urandom(32)
    aaguid = bytes(16)
    auth_data = (hashlib.sha256(RP_ID.encode()).digest() + bytes([0x45]) + struct.pack(">I", 0) + aaguid
                 + struct.pack(">H", len(credential_id)) + credential_id + cose)
    challenge = os.urandom(32)
    client_data = json.dumps({"type": "webauthn.create", "challenge": b64url(challenge), "origin": ORIGIN, "crossOrigin": False},
                             separators=(",", ":")).encode()
    signed = auth_data + hashlib.sha256(client_data).digest()
    statement = {"alg": -7, "sig": leaf_key.sign(signed, ec.ECDSA(hashes.SHA256())), "x5c": chain}
    if extra:
        statements = [{"fmt": "packed", "attStmt": statement}]
        statements += [{"fmt": "packed", "attStmt": {"alg": -7, "sig": key.sign(signed, ec.ECDSA(hashes.SHA256())), "x5c": more}}
                       for key, more in extra]
        attestation = cbor.encode({"fmt": "compound", "attStmt": statements, "authData": auth_data})
    else:
        attestation = cbor.encode({"fmt": "packed", "attStmt": statement, "authData": auth_data})
    return {"credential": {"id": b64url(credential_id), "rawId": b64url(credential_id), "type": "public-key",
                           "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation)}},
            "challenge": b64url(challenge), "rpId": RP_ID, "origin": ORIGIN}


def main():
    year = datetime.timedelta(days=365)
    trusted_key = ec.generate_private_key(ec.SECP256R1())
    trusted = certificate(name("Trusted Root"), trusted_key, name("Trusted Root"), trusted_key, True, NOW - year, NOW + 20 * year)
    attacker_key = ec.generate_private_key(ec.SECP256R1())
    attacker = certificate(name("Trusted Root"), attacker_key, name("Trusted Root"), attacker_key, True, NOW - year, NOW + 20 * year)
    intermediate_key = ec.generate_private_key(ec.SECP256R1())
    intermediate = certificate(name("Intermediate"), intermediate_key, name("Trusted Root"), trusted_key, True, NOW - year, NOW + 20 * year)
    cases = []

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = certificate(name("Leaf"), leaf_key, name("Trusted Root"), attacker_key, False, NOW - year, NOW + 20 * year)
    cases.append({"name": "self-signed root inside x5c", **registration(leaf_key, [der(leaf), der(attacker)]),
                  "refusedWithRoots": ["trusted"], "acceptedWithRoots": ["attacker"]})

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = certificate(name("Leaf"), leaf_key, name("Intermediate"), intermediate_key, False, NOW - year, NOW + 20 * year)
    cases.append({"name": "intermediate", **registration(leaf_key, [der(leaf), der(intermediate)]), "acceptedWithRoots": ["trusted"],
                  "refusedWithRoots": []})
    cases.append({"name": "intermediate missing from x5c", **registration(leaf_key, [der(leaf)]), "refusedWithRoots": ["trusted"],
                  "acceptedWithRoots": []})

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    not_after = NOW - 30 * datetime.timedelta(days=1)
    leaf = certificate(name("Leaf"), leaf_key, name("Trusted Root"), trusted_key, False, NOW - year, not_after)
    cases.append({"name": "expired leaf", **registration(leaf_key, [der(leaf)]), "acceptedWithRoots": ["trusted"], "refusedWithRoots": [],
                  "validAt": int((NOW - year / 2).timestamp()), "validUntil": int(not_after.timestamp())})

    first_key, second_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    first = certificate(name("Leaf"), first_key, name("Trusted Root"), trusted_key, False, NOW - year, NOW + 20 * year)
    second = certificate(name("Leaf"), second_key, name("Intermediate"), intermediate_key, False, NOW - year, NOW + 20 * year)
    cases.append({"name": "compound of two packed statements", **registration(first_key, [der(first)], [(second_key, [der(second), der(intermediate)])]),
                  "acceptedWithRoots": ["trusted"], "refusedWithRoots": ["attacker"]})
    rogue_key = ec.generate_private_key(ec.SECP256R1())
    rogue = certificate(name("Leaf"), rogue_key, name("Trusted Root"), attacker_key, False, NOW - year, NOW + 20 * year)
    cases.append({"name": "compound with one untrusted statement", **registration(first_key, [der(first)], [(rogue_key, [der(rogue)])]),
                  "acceptedWithRoots": [], "refusedWithRoots": ["trusted", "attacker"]})

    document = {
        "description": "Packed x5c registrations testing how a chain is anchored (GHSA-6hxq-p678-4hr2: a self-signed root sent in x5c "
                       "must not anchor it), made by scripts/make_attestation_chain_vectors.py with pyca/cryptography and python-fido2.",
        "sources": {"cases": "this repository, scripts/make_attestation_chain_vectors.py"},
        "cases": cases,
        "roots": {"trusted": base64.b64encode(der(trusted)).decode(), "attacker": base64.b64encode(der(attacker)).decode()},
    }
    with open("Vectors/webauthn/attestation-chains.json", "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
