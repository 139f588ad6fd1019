#!/usr/bin/env python3
"""Writes Vectors/webauthn/mds3.json: FIDO Metadata Service (MDS3) BLOBs
signed (RS256, x5c) under a test root made here with pyca/cryptography, for
the TPM registrations of Vectors/webauthn/tpm.json: their AAGUID's statement
lists the Microsoft TPM root, so a relying party with the BLOB and no root of
its own accepts them; in the "revoked" BLOB the newest status report says
REVOKED. Also a BLOB signed under another root, and an older one.

Run from the repository root: .venv-interop/bin/python scripts/make_mds_vectors.py
"""
import base64
import datetime
import json

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
YEAR = datetime.timedelta(days=365)
TPM_AAGUID = "08987058-cadc-4b81-b6e1-30de50dcbe96"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def der(cert):
    return cert.public_bytes(serialization.Encoding.DER)


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "TokenMint MDS test")])


def certificate(subject, key, issuer, issuer_key, ca):
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(NOW - 5 * YEAR).not_valid_after(NOW + 20 * YEAR)
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True).sign(issuer_key, hashes.SHA256()))


def chain(root_name):
    root_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    root = certificate(name(root_name), root_key, name(root_name), root_key, True)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = certificate(name("MDS test CA"), ca_key, name(root_name), root_key, True)
    signer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = certificate(name("mds.tokenmint.test"), signer_key, name("MDS test CA"), ca_key, False)
    return root, [signer, ca], signer_key


def blob(number, reports, signer_key, certificates, microsoft_root):
    entries = [
        {"aaid": "4e4e#4005", "statusReports": [{"status": "FIDO_CERTIFIED", "effectiveDate": "2020-01-01"}]},
        {"aaguid": TPM_AAGUID, "metadataStatement": {"description": "Windows Hello (TPM), test entry", "aaguid": TPM_AAGUID,
                                                     "attestationRootCertificates": [microsoft_root]},
         "statusReports": reports, "timeOfLastStatusChange": "2024-05-01"},
        {"aaguid": "00000000-0000-0000-0000-000000000000", "metadataStatement": {"description": "an entry with no reports",
                                                                                 "attestationRootCertificates": []}, "statusReports": []},
    ]
    header = {"alg": "RS256", "typ": "JWT", "x5c": [base64.b64encode(der(c)).decode() for c in certificates]}
    payload = {"legalHeader": "Test data of TokenMint; not the FIDO Alliance's.", "no": number, "nextUpdate": "2026-12-01", "entries": entries}
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(json.dumps(payload, separators=(",", ":")).encode())
    signature = signer_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(signature)


def main():
    with open("Vectors/webauthn/tpm.json") as handle:
        microsoft_root = next(iter(json.load(handle)["roots"].values()))
    root, certificates, signer_key = chain("MDS test root")
    other_root, other_certificates, other_key = chain("Another root")
    certified = [{"status": "FIDO_CERTIFIED", "effectiveDate": "2022-01-01"}, {"status": "FIDO_CERTIFIED_L1", "effectiveDate": "2023-03-01"}]
    # Listed out of order: the newest by effectiveDate decides.
    revoked = [{"status": "REVOKED", "effectiveDate": "2024-05-01"}, {"status": "FIDO_CERTIFIED_L1", "effectiveDate": "2023-03-01"}]
    document = {
        "description": "FIDO MDS3 BLOBs signed under a test root made by scripts/make_mds_vectors.py (pyca/cryptography), for the TPM "
                       "registrations of tpm.json (AAGUID %s, whose statement lists the Microsoft TPM root)." % TPM_AAGUID,
        "sources": {"cases": "this repository, scripts/make_mds_vectors.py"},
        "root": base64.b64encode(der(root)).decode(),
        "otherRoot": base64.b64encode(der(other_root)).decode(),
        "tpmAaguid": TPM_AAGUID,
        "blobs": {
            "certified": blob(7, certified, signer_key, certificates, microsoft_root),
            "revoked": blob(8, revoked, signer_key, certificates, microsoft_root),
            "older": blob(6, certified, signer_key, certificates, microsoft_root),
            "otherSigner": blob(9, certified, other_key, other_certificates, microsoft_root),
        },
    }
    with open("Vectors/webauthn/mds3.json", "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
