#!/usr/bin/env python3
"""Writes Vectors/x5c/jws.json: compact JWS whose key is the leaf of their
`x5c` header (RFC 7515 §4.1.6), signed with pyca/cryptography under a test
root made here, for JOSE's x5c verifier. Each case says whether a verifier
trusting `root` at `time` must accept it, and if not, which check refuses it:
a chain through an intermediate (ES256, RS256, EdDSA), a leaf signed by the
root directly, a self-signed "root" of the attacker's inside x5c
(GHSA-6hxq-p678-4hr2), another root's chain, an expired leaf, a leaf whose
key usage forbids signing, an x5c that is not standard base64 or names no
certificate, an alg the leaf's key cannot make, and a changed payload.

Run from the repository root: .venv-interop/bin/python scripts/make_x5c_vectors.py
"""
import base64
import datetime
import json

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

from make_mds_vectors import b64url, der

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
YEAR = datetime.timedelta(days=365)


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "TokenMint x5c test")])


def certificate(subject, key, issuer, issuer_key, ca, not_after=NOW + 10 * YEAR, key_usage=None):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(NOW - YEAR).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                                      data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                      encipher_only=False, decipher_only=False), critical=True)
    elif key_usage is not None:
        builder = builder.add_extension(key_usage, critical=True)
    algorithm = None if isinstance(issuer_key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(issuer_key, algorithm)


def sign(alg, key, signing_input):
    if alg == "ES256":
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    if alg == "RS256":
        return key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    if alg == "EdDSA":
        return key.sign(signing_input)
    raise ValueError(alg)


def jws(alg, key, chain, payload=b'{"iss":"x5c test"}', x5c=None, header_alg=None):
    header = {"alg": header_alg or alg, "x5c": x5c if x5c is not None else [base64.b64encode(der(c)).decode() for c in chain]}
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(payload)).encode()
    return signing_input.decode() + "." + b64url(sign(alg, key, signing_input))


def main():
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = certificate(name("x5c test root"), root_key, name("x5c test root"), root_key, ca=True)
    inter_key = ec.generate_private_key(ec.SECP256R1())
    inter = certificate(name("x5c test intermediate"), inter_key, root.subject, root_key, ca=True)
    other_key = ec.generate_private_key(ec.SECP256R1())
    other = certificate(name("x5c other root"), other_key, name("x5c other root"), other_key, ca=True)
    signing = x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                            key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)
    no_signing = x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=True, data_encipherment=False,
                               key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)
    keys = {"ES256": ec.generate_private_key(ec.SECP256R1()), "RS256": rsa.generate_private_key(65537, 2048),
            "EdDSA": ed25519.Ed25519PrivateKey.generate()}
    cases = []

    def add(label, token, expected, why=""):
        cases.append({"name": label, "jws": token, "valid": expected, "refusal": why})

    for alg, key in keys.items():
        leaf = certificate(name(f"x5c {alg} signer"), key, inter.subject, inter_key, ca=False, key_usage=signing)
        add(f"{alg}: leaf, intermediate, to the root", jws(alg, key, [leaf, inter]), True)
    key = keys["ES256"]
    direct = certificate(name("x5c direct signer"), key, root.subject, root_key, ca=False)
    add("ES256: a leaf the root signed, no key usage extension", jws("ES256", key, [direct]), True)
    add("ES256: the root itself sent in x5c after the chain", jws("ES256", key, [direct, root]), True)
    leaf = certificate(name("x5c ES256 signer"), key, inter.subject, inter_key, ca=False, key_usage=signing)
    add("the intermediate left out of x5c", jws("ES256", key, [leaf]), False, "untrustedCertificate")
    fake_key = ec.generate_private_key(ec.SECP256R1())
    fake_root = certificate(name("x5c test root"), fake_key, name("x5c test root"), fake_key, ca=True)
    fake_leaf = certificate(name("x5c forged signer"), key, fake_root.subject, fake_key, ca=False)
    add("a self-signed root of the attacker's, with the real root's name, inside x5c (GHSA-6hxq-p678-4hr2)",
        jws("ES256", key, [fake_leaf, fake_root]), False, "untrustedCertificate")
    stranger = certificate(name("x5c stranger"), key, other.subject, other_key, ca=False)
    add("a chain to another root", jws("ES256", key, [stranger, other]), False, "untrustedCertificate")
    expired = certificate(name("x5c expired signer"), key, inter.subject, inter_key, ca=False, not_after=NOW - datetime.timedelta(days=1))
    add("a leaf that expired before the time", jws("ES256", key, [expired, inter]), False, "untrustedCertificate")
    encipher = certificate(name("x5c encipherment only"), key, inter.subject, inter_key, ca=False, key_usage=no_signing)
    add("a leaf whose key usage forbids signing", jws("ES256", key, [encipher, inter]), False, "untrustedCertificate")
    add("x5c in base64url, not standard base64",
        jws("ES256", key, [], x5c=[b64url(der(leaf)) + "_-", base64.b64encode(der(inter)).decode()]), False, "untrustedCertificate")
    add("an empty x5c", jws("ES256", key, [], x5c=[]), False, "untrustedCertificate")
    add("alg RS256 on an EC leaf", jws("ES256", key, [leaf, inter], header_alg="RS256"), False, "untrustedCertificate")
    good = jws("ES256", key, [leaf, inter])
    head, body, signature = good.split(".")
    add("the payload changed after signing", head + "." + b64url(b'{"iss":"x5c tester"}') + "." + signature, False, "invalidSignature")
    output = {
        "description": "Compact JWS whose key is their x5c leaf (RFC 7515 §4.1.6), made by scripts/make_x5c_vectors.py with "
                       "pyca/cryptography: a verifier trusting `root` at `time` accepts exactly the cases marked valid; `refusal` names the "
                       "JOSE error code of the others. `otherRoot` anchors nothing here.",
        "sources": {"cases": "this repository, scripts/make_x5c_vectors.py (pyca/cryptography " + __import__("cryptography").__version__ + ")"},
        "time": int(NOW.timestamp()),
        "root": base64.b64encode(der(root)).decode(),
        "otherRoot": base64.b64encode(der(other)).decode(),
        "cases": cases,
    }
    with open("Vectors/x5c/jws.json", "w") as handle:
        json.dump(output, handle, indent=1)
        handle.write("\n")
    print(f"Vectors/x5c/jws.json: {len(cases)} cases")


if __name__ == "__main__":
    main()
