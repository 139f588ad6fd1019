#!/usr/bin/env python3
"""Leak check: the CLI flows once each under LeakSanitizer.

Runs keygen (EdDSA, ES256, HS256), sign/verify, jwt sign/verify, aztec (text
and PNG), the WhitelabelPay flow (init, means add, enrol, push, mint online
and offline, verify), the FIDO2 flow (register, assert, verify-registration,
verify-assertion) and the auth flow (issue, refresh, challenge, elevate,
verify), each in a build with `--sanitize=address` (AddressSanitizer with
LeakSanitizer at exit). A step fails when it exits non-zero or reports any
error or leaked byte (OpenSSL, libsodium, zint, SQLite and TokenMint objects
alike). valgrind is not used: valgrind 3.19 itself crashes on the signal
thread libdispatch starts for async commands.

The sanitized CLI is built into .build-asan unless $TOKENMINT names one.
Prints one line per step and ends with `N passed, M failed`.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid

if "TOKENMINT" not in os.environ:
    os.environ["TOKENMINT"] = ".build-asan/debug/tokenmint"
    subprocess.run(["swift", "build", "--sanitize=address", "--build-path", ".build-asan", "--product", "tokenmint"], check=True)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tmcli import TOKENMINT, Checks, b64u, command  # noqa: E402

SANITIZER = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
                 LSAN_OPTIONS="report_objects=1")
check = Checks()


def grind(name, argv, cwd):
    """Runs argv in the sanitized build; returns stdout (or None when the step failed)."""
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=600, env=SANITIZER)
    leaked = re.search(r"SUMMARY: AddressSanitizer: (\d+) byte\(s\) leaked", proc.stderr)
    error = "ERROR: AddressSanitizer" in proc.stderr or "ERROR: LeakSanitizer" in proc.stderr
    ok = proc.returncode == 0 and not error
    detail = f"exit {proc.returncode}, leaked {leaked.group(1) if leaked else 0} B"
    report = "" if ok else "\n" + proc.stderr[-4000:]
    check(f"{name} ({detail})", ok, report)
    return proc.stdout if ok else None


def main():
    with tempfile.TemporaryDirectory() as tmp:
        def tm(name, *args):
            return grind(name, [TOKENMINT, *args], tmp)

        def tm_store(name, store, *args):
            return grind(name, command(os.path.join(tmp, store), list(args)), tmp)

        for alg in ["EdDSA", "ES256", "HS256"]:
            tm(f"keygen {alg}", "keygen", "--alg", alg, "--out", f"{alg}.key")
        with open(os.path.join(tmp, "ES256.pub"), "w") as f:
            f.write(tm("pubkey", "pubkey", "ES256.key") or "")
        sig = tm("sign ES256 deterministic", "sign", "--key", "ES256.key", "--alg", "ES256", "--deterministic", "--hex", "48656c6c6f")
        if sig:
            tm("verify ES256", "verify", "--key", "ES256.pub", "--alg", "ES256", "--sig", sig.strip(), "--hex", "48656c6c6f")
        tm("keygen EdDSA JWK", "keygen", "--alg", "EdDSA", "--jwk", "--out", "issuer.jwk")
        token = tm("jwt sign", "jwt", "sign", "--key", "issuer.jwk", "--claims", '{"scope":"pay"}', "--ttl", "600",
                   "--iss", "me", "--aud", "desk")
        if token:
            tm("jwt verify", "jwt", "verify", "--key", "issuer.jwk", "--iss", "me", "--aud", "desk", token.strip())
        tm("aztec text", "aztec", "02/leak-check-payload")
        tm("aztec PNG", "aztec", "--format", "png", "--out", "t.png", "--hex", "0a0b0c")

        tm_store("pay init", "pay", "pay", "init", "--tenant", str(uuid.uuid4()), "--reference", str(uuid.uuid4()),
                 "--offline-limit", "5")
        tm_store("pay means add", "pay", "pay", "means", "add", "card-1")
        enrolment = tm_store("pay enrol", "pay", "pay", "enrol")
        tm_store("pay push", "pay", "pay", "push", '{"aps":{},"yp-type":"enrolment-succeeded.v1"}')
        payment = tm_store("pay mint online", "pay", "pay", "mint")
        tm_store("pay mint offline", "pay", "pay", "mint", "--offline")
        if enrolment and payment:
            tm_store("pay verify", "pay", "pay", "verify", "--enrolment", enrolment.strip(), payment.strip())

        rp = ["--rp", "tokenmint.test", "--origin", "https://tokenmint.test"]
        challenge = b64u(os.urandom(32))
        reg = tm_store("fido2 register", "st", "fido2", "register", *rp, f"--challenge={challenge}", "--user-id", "0102",
                       "--user-name", "alice", "--uv")
        if reg:
            with open(os.path.join(tmp, "reg.json"), "w") as f:
                f.write(reg)
            tm_store("fido2 verify-registration", "st", "fido2", "verify-registration", *rp, f"--challenge={challenge}",
                     "--in", "reg.json")
            credential = json.loads(reg)["rawId"]
            challenge2 = b64u(os.urandom(32))
            assertion = tm_store("fido2 assert", "st", "fido2", "assert", *rp, f"--challenge={challenge2}",
                                 f"--credential={credential}", "--uv")
            if assertion:
                with open(os.path.join(tmp, "as.json"), "w") as f:
                    f.write(assertion)
                tm_store("fido2 verify-assertion", "st", "fido2", "verify-assertion", *rp, f"--challenge={challenge2}",
                         "--in", "as.json")

            account = str(uuid.uuid4())
            issued = tm_store("auth issue", "st", "auth", "issue", "--account", account, "--client-id", "app")
            if issued:
                tm_store("auth refresh", "st", "auth", "refresh", "--", json.loads(issued)["refresh_token"])
                tm_store("auth passkey", "st", "auth", "passkey", "--account", account, f"--challenge={challenge}",
                         "--in", "reg.json")
                step = subprocess.run(command(os.path.join(tmp, "st"), ["auth", "challenge", "--account", account]),
                                      capture_output=True, text=True).stdout.strip()
                got = subprocess.run(command(os.path.join(tmp, "st"), ["fido2", "assert", *rp, f"--challenge={step}",
                                                                        f"--credential={credential}", "--uv"]),
                                     capture_output=True, text=True).stdout
                with open(os.path.join(tmp, "step.json"), "w") as f:
                    f.write(got)
                elevated = tm_store("auth elevate", "st", "auth", "elevate", "--account", account, "--client-id", "app",
                                    "--assertion", "step.json")
                if elevated:
                    tm_store("auth verify", "st", "auth", "verify", json.loads(elevated)["access_token"])
    sys.exit(check.summary())


if __name__ == "__main__":
    main()
