#!/usr/bin/env python3
"""`tokenmint webauthn mds load` and `fido2 verify-registration --mds-root`
from the shell, on the vectors: a metadata BLOB signed under a test root
(Vectors/webauthn/mds3.json) makes the relying party accept py_webauthn's
TPM registration with an ECC key (Vectors/webauthn/tpm.json, the one whose
chain is still valid) with no attestation root of its own; the revoked BLOB
refuses it; an older BLOB, one under another root, and a tampered file are
refused at load.

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_e2e  # noqa: E402
from server_e2e import check  # noqa: E402

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")


def tm(*args):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True)


def pem(der_b64):
    body = "\n".join(der_b64[i:i + 64] for i in range(0, len(der_b64), 64))
    return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"


def main():
    with open("Vectors/webauthn/mds3.json") as handle:
        mds = json.load(handle)
    with open("Vectors/webauthn/tpm.json") as handle:
        tpm = json.load(handle)
    case = next(c for c in tpm["cases"] if c["name"] == "test_verify_tpm_with_ecc_public_area_type")
    with tempfile.TemporaryDirectory(prefix="tokenmint-mds-") as work:
        root, other = os.path.join(work, "root.pem"), os.path.join(work, "other.pem")
        with open(root, "w") as handle:
            handle.write("the test root\n" + pem(mds["root"]))
        with open(other, "w") as handle:
            handle.write(pem(mds["otherRoot"]))
        files = {}
        for name, jws in mds["blobs"].items():
            files[name] = os.path.join(work, name + ".jws")
            with open(files[name], "w") as handle:
                handle.write(jws + "\n")
        credential = os.path.join(work, "credential.json")
        with open(credential, "w") as handle:
            json.dump(case["credential"], handle)
        challenge = case["challenge"]

        def verify(store, *extra):
            return tm("fido2", "verify-registration", "--store", store, "--rp", case["rpId"], "--origin", case["origin"],
                      "--challenge", challenge, "--in", credential, *extra)

        store = os.path.join(work, "without")
        result = verify(store)
        check("without metadata or roots the TPM registration is refused (exit 1, no trusted root)",
              result.returncode == 1 and "trusted root" in result.stderr, result.stderr)

        store = os.path.join(work, "certified")
        result = tm("webauthn", "mds", "load", "--store", store, "--root", root, files["certified"])
        summary = json.loads(result.stdout) if result.returncode == 0 else {}
        check("mds load verifies and keeps the certified BLOB (no 7, 2 FIDO2 entries)",
              summary.get("no") == 7 and summary.get("entries") == 2 and summary.get("refused") == 0, result.stderr)
        result = verify(store, "--mds-root", root)
        answer = json.loads(result.stdout) if result.returncode == 0 else {}
        check("with the BLOB, the statement's Microsoft root anchors it: accepted as tpm", answer.get("fmt") == "tpm", result.stderr)

        result = tm("webauthn", "mds", "load", "--store", store, "--root", root, files["older"])
        check("an older BLOB is refused as a rollback", result.returncode != 0 and "not newer" in result.stderr, result.stderr)
        result = tm("webauthn", "mds", "load", "--store", store, "--root", root, files["otherSigner"])
        check("a BLOB under another root is refused", result.returncode != 0 and "chain" in result.stderr, result.stderr)
        tampered = os.path.join(work, "tampered.jws")
        with open(files["certified"]) as source, open(tampered, "w") as target:
            text = source.read().strip()
            head, payload, signature = text.split(".")
            raw = bytearray(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            raw[raw.index(b"REVOKED"[0:1]) if b"R" in raw else 0] ^= 1
            target.write(head + "." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode() + "." + signature)
        result = tm("webauthn", "mds", "load", "--store", os.path.join(work, "t"), "--root", root, tampered)
        check("a tampered BLOB is refused", result.returncode != 0 and "signature" in result.stderr, result.stderr)

        store = os.path.join(work, "revoked")
        tm("webauthn", "mds", "load", "--store", store, "--root", root, files["revoked"])
        result = verify(store, "--mds-root", root)
        check("with the revoked BLOB the same registration is refused (authenticatorRefused, REVOKED)",
              result.returncode == 1 and "REVOKED" in result.stderr, result.stderr)
        result = verify(os.path.join(work, "none"), "--mds-root", root)
        check("--mds-root without a kept BLOB is an error naming the load command", result.returncode == 2 and "mds load" in result.stderr,
              result.stderr)
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
