#!/usr/bin/env python3
"""`tokenmint oath` and pyotp (PyPI), both ways: the same HOTP (RFC 4226) and
TOTP (RFC 6238) codes for the same secrets, and `otpauth://` URIs (Google's
Key Uri Format) that each side reads from the other.

pyotp is an independent implementation of both RFCs and of the URI format;
TokenMint is reached only through its CLI. A temporary --store folder holds
oath.sqlite and its master key.

Checks, in order:

V  pyotp recomputes every code of Vectors/oath/rfc4226.json (the 10 HOTP
   values of RFC 4226 appendix D) and Vectors/oath/rfc6238.json (the 18 rows
   of RFC 6238 appendix B), the files TokenMint's Swift tests read.
P  pyotp -> tokenmint: for SHA1/SHA256/SHA512 x 6/7/8 digits x periods 30/60,
   a pyotp.random_base32() secret and pyotp's provisioning_uri() go to
   `tokenmint oath add URI` (which prints the name, issuer:account); then
   `tokenmint oath code NAME --time T` equals pyotp.TOTP(...).at(T) at ten
   times (the epoch, RFC 6238's times, both sides of a period boundary, now).
   HOTP for the three algorithms x 6/7/8 digits, starting at counter 0 or 5:
   five successive `oath code NAME` (a process each, so the counter is read
   back from the store every time) equal pyotp.HOTP(...).at(0), ..., at(4).
G  tokenmint -> pyotp: `oath add --generate` (TOTP for every algorithm,
   digit count and period of P; HOTP for every algorithm, starting at 0 or 3)
   prints a URI; pyotp.parse_uri reads it (type, issuer, account, digits,
   algorithm, period or initial count, a 20-byte secret) and computes the
   same codes as `tokenmint oath code` (TOTP at four times, HOTP three in a
   row). One more generated URI goes to --aztec FILE.png as well: the file is
   mode 0600 and zxing-cpp decodes its symbol to exactly the printed URI.
L  `oath list`: one tab-separated line per credential (name, type,
   algorithm, digits, period or next counter); no secret anywhere in it.
E  refusals, each exit 2 with one `tokenmint: oath.<code>` line on stderr
   and nothing on stdout: malformed URIs (an unknown algorithm, 9 digits,
   period 0, no secret, a hotp URI without counter, bad base32, bad
   percent-encoding, an issuer mismatch, a secret over 128 bytes); the same
   name again without --force (with --force it replaces the secret); code
   and delete of an unknown name; a negative --time; code after delete.
P  (also) a pyotp URI added with --aztec FILE (SVG, then PNG: mode 0600,
   zxing-cpp reads back a URI with pyotp's secret) and --verification (the
   listing says so; codes agree).
S  no secret used in the run, raw or base32, appears in any file of the
   store folder (oath.sqlite, its WAL): the secrets are sealed at rest.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed`; exits 1 on any failure.
"""
import base64
import datetime
import hashlib
import json
import os
import stat
import sys
import tempfile
import time

import pyotp

from tmcli import TOKENMINT, Checks, Fail, expect, run

checks = Checks()

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Vectors", "oath")
DIGESTS = {"SHA1": hashlib.sha1, "SHA256": hashlib.sha256, "SHA512": hashlib.sha512}
# The epoch, RFC 6238's times, the last second of a step of both periods and the next.
BOUNDARY = 1_700_000_000 - 1_700_000_000 % 60 - 1
TIMES = [0, 59, 1111111109, 1111111111, 1234567890, 2000000000, 20000000000, BOUNDARY, BOUNDARY + 1]
ISSUER = "pyotp Test"
GENERATED_ISSUER = "TokenMint Test"
SECRETS = []  # every secret used, base32: none may show up in `oath list`


def utc(t):
    """A timezone-aware datetime: pyotp then counts in UTC whatever its version."""
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc)


def b32(data):
    return base64.b32encode(data).decode().rstrip("=")


def cli(store, *args):
    """Runs the CLI, which must succeed; its stdout, stripped."""
    rc, out, err = run(store, *args)
    expect(rc == 0, f"`tokenmint {' '.join(args)[:120]}` exited {rc}: {err.strip()[:300]}")
    return out.strip()


def refused(store, code, *args):
    """Runs the CLI, which must fail cleanly: exit 2, `tokenmint: oath.<code>` on stderr, nothing on stdout."""
    rc, out, err = run(store, *args)
    expect(rc == 2, f"`tokenmint {' '.join(args)[:120]}` exited {rc} (expected 2): {err.strip()[:300]}")
    expect(out == "", f"stdout of a refusal: {out[:200]!r}")
    lines = err.strip().splitlines()
    expect(len(lines) == 1 and lines[0].startswith(f"tokenmint: {code}"), f"stderr {err.strip()[:300]!r}, expected tokenmint: {code}")


# ---- V: the vector files ------------------------------------------------------

def check_rfc4226():
    with open(os.path.join(VECTORS, "rfc4226.json"), encoding="utf-8") as f:
        tests = json.load(f)["tests"]
    expect(len(tests) == 10, f"{len(tests)} HOTP cases")
    for t in tests:
        otp = pyotp.HOTP(b32(bytes.fromhex(t["secret"])), digits=t["digits"], digest=hashlib.sha1)
        expect(otp.at(t["counter"]) == t["hotp"], f"counter {t['counter']}: pyotp {otp.at(t['counter'])}, file {t['hotp']}")


def check_rfc6238():
    with open(os.path.join(VECTORS, "rfc6238.json"), encoding="utf-8") as f:
        tests = json.load(f)["tests"]
    expect(len(tests) == 18, f"{len(tests)} TOTP rows")
    for t in tests:
        secret = bytes.fromhex(t["secret"])
        expect(len(secret) == DIGESTS[t["mode"]]().digest_size, f"{t['comment']}: a {len(secret)}-byte seed")
        otp = pyotp.TOTP(b32(secret), digits=t["digits"], digest=DIGESTS[t["mode"]], interval=t["period"])
        got = otp.at(utc(t["time"]))
        expect(got == t["totp"], f"{t['comment']}: pyotp {got}, file {t['totp']}")
        expect(f"{t['time'] // t['period']:016X}" == t["step"], f"{t['comment']}: step {t['step']}")


# ---- P: pyotp's URIs into tokenmint --------------------------------------------

def pyotp_totp(store, algorithm, digits, period, times):
    account = f"totp-{algorithm.lower()}-{digits}-{period}@example.org"
    secret = pyotp.random_base32()
    SECRETS.append(secret)
    otp = pyotp.TOTP(secret, digits=digits, digest=DIGESTS[algorithm], interval=period)
    uri = otp.provisioning_uri(name=account, issuer_name=ISSUER)
    name = cli(store, "oath", "add", uri)
    expect(name == f"{ISSUER}:{account}", f"add printed {name!r}")
    for t in times:
        got = cli(store, "oath", "code", name, "--time", str(t))
        want = otp.at(utc(t))
        expect(got == want, f"at {t}: tokenmint {got}, pyotp {want}")


def pyotp_hotp(store, algorithm, digits, start):
    account = f"hotp-{algorithm.lower()}-{digits}@example.org"
    secret = pyotp.random_base32()
    SECRETS.append(secret)
    otp = pyotp.HOTP(secret, digits=digits, digest=DIGESTS[algorithm], initial_count=start)
    uri = otp.provisioning_uri(name=account, issuer_name=ISSUER)
    expect(f"counter={start}" in uri, f"pyotp's URI has no counter: {uri}")
    name = cli(store, "oath", "add", uri)
    expect(name == f"{ISSUER}:{account}", f"add printed {name!r}")
    for n in range(5):
        got = cli(store, "oath", "code", name)
        expect(got == otp.at(n), f"code {n + 1} (counter {start + n}): tokenmint {got}, pyotp {otp.at(n)}")


# ---- G: tokenmint's URIs into pyotp --------------------------------------------

def generate(store, *args):
    uri = cli(store, "oath", "add", "--generate", "--issuer", GENERATED_ISSUER, *args)
    expect(uri.startswith("otpauth://") and "\n" not in uri, f"--generate printed {uri[:200]!r}")
    otp = pyotp.parse_uri(uri)
    SECRETS.append(otp.secret)
    expect(len(otp.byte_secret()) == 20, f"a {len(otp.byte_secret())}-byte secret")
    expect(otp.issuer == GENERATED_ISSUER, f"pyotp read the issuer {otp.issuer!r}")
    return uri, otp


def generated_totp(store, algorithm, digits, period, times):
    account = f"gen-{algorithm.lower()}-{digits}-{period}"
    _, otp = generate(store, "--account", account, "--algorithm", algorithm, "--digits", str(digits), "--period", str(period))
    expect(isinstance(otp, pyotp.TOTP), f"pyotp read a {type(otp).__name__}")
    expect(otp.name == account and otp.digits == digits and otp.interval == period, f"pyotp read {otp.name!r}, {otp.digits}, {otp.interval}")
    expect(otp.digest().name == algorithm.lower(), f"pyotp read {otp.digest().name}")
    for t in times:
        got = cli(store, "oath", "code", f"{GENERATED_ISSUER}:{account}", "--time", str(t))
        want = otp.at(utc(t))
        expect(got == want, f"at {t}: tokenmint {got}, pyotp {want}")


def generated_hotp(store, algorithm, start):
    account = f"gen-hotp-{algorithm.lower()}"
    _, otp = generate(store, "--account", account, "--type", "hotp", "--algorithm", algorithm, "--digits", "8", "--counter", str(start))
    expect(isinstance(otp, pyotp.HOTP), f"pyotp read a {type(otp).__name__}")
    expect(otp.initial_count == start and otp.digits == 8 and otp.digest().name == algorithm.lower(),
           f"pyotp read counter {otp.initial_count}, {otp.digits} digits, {otp.digest().name}")
    for n in range(3):
        got = cli(store, "oath", "code", f"{GENERATED_ISSUER}:{account}")
        expect(got == otp.at(n), f"code {n + 1}: tokenmint {got}, pyotp {otp.at(n)}")


def generated_aztec(store, tmp):
    import zxingcpp
    from PIL import Image

    path = os.path.join(tmp, "uri.png")
    uri, otp = generate(store, "--account", "aztec", "--aztec", path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    expect(mode == 0o600, f"{path} has mode {mode:o}")
    with Image.open(path) as image:
        found = zxingcpp.read_barcodes(image.convert("L"), formats=zxingcpp.BarcodeFormat.Aztec)
    expect(len(found) == 1, f"zxing-cpp found {len(found)} Aztec symbols")
    expect(found[0].text == uri, f"the symbol holds {found[0].text[:200]!r}")
    now = int(time.time())
    expect(cli(store, "oath", "code", f"{GENERATED_ISSUER}:aztec", "--time", str(now)) == otp.at(utc(now)), "the code differs")


def given_aztec(store, tmp):
    """A pyotp URI added with --aztec and --verification: the symbol holds the
    credential's URI (pyotp reads the same secret from it), the listing shows
    the flag, and the code still agrees (the CLI's user is verified)."""
    import zxingcpp
    from PIL import Image

    secret = pyotp.random_base32()
    SECRETS.append(secret)
    otp = pyotp.TOTP(secret)
    uri = otp.provisioning_uri(name="given-aztec@example.org", issuer_name=ISSUER)
    path = os.path.join(tmp, "given.svg")
    name = cli(store, "oath", "add", uri, "--aztec", path, "--verification")
    expect(name == f"{ISSUER}:given-aztec@example.org", f"add printed {name!r} (a given URI is not printed again)")
    expect(stat.S_IMODE(os.stat(path).st_mode) == 0o600, "the SVG is not mode 0600")
    png = os.path.join(tmp, "given.png")
    cli(store, "oath", "add", uri, "--aztec", png, "--force")
    with Image.open(png) as image:
        found = zxingcpp.read_barcodes(image.convert("L"), formats=zxingcpp.BarcodeFormat.Aztec)
    expect(len(found) == 1, f"zxing-cpp found {len(found)} Aztec symbols")
    read = pyotp.parse_uri(found[0].text)
    expect(read.secret == secret and read.name == "given-aztec@example.org", "the symbol's URI is not the credential's")
    cli(store, "oath", "add", uri, "--verification", "--force")
    listed = [line for line in cli(store, "oath", "list").splitlines() if line.startswith(name + "\t")]
    expect(len(listed) == 1 and listed[0].endswith("\tverification"), f"listed as {listed}")
    now = int(time.time())
    expect(cli(store, "oath", "code", name, "--time", str(now)) == otp.at(utc(now)), "the code differs")
    cli(store, "oath", "delete", name)


def sealed_at_rest(store):
    """No secret, raw or base32, in any file of the store folder."""
    files = [os.path.join(store, f) for f in os.listdir(store)]
    blob = b"".join(open(f, "rb").read() for f in files if os.path.isfile(f))
    expect(len(SECRETS) >= 40, f"only {len(SECRETS)} secrets were used")
    for secret in SECRETS:
        raw = base64.b32decode(secret + "=" * (-len(secret) % 8))
        expect(raw not in blob, "a raw secret is in the store's files")
        expect(secret.encode() not in blob and secret.lower().encode() not in blob, "a base32 secret is in the store's files")


# ---- L, E ----------------------------------------------------------------------

def listing(store, expected):
    out = cli(store, "oath", "list")
    lines = {line.split("\t")[0]: line.split("\t")[1:] for line in out.splitlines()}
    for name, fields in expected.items():
        expect(lines.get(name) == fields, f"{name}: listed as {lines.get(name)}, expected {fields}")
    for secret in SECRETS:
        expect(secret not in out and secret.lower() not in out, "a secret is in the listing")


def refusals(store):
    s = "secret=" + pyotp.random_base32()
    for uri, why in [
        (f"otpauth://totp/x:a?{s}&algorithm=MD5", "an unknown algorithm"),
        (f"otpauth://totp/x:a?{s}&digits=9", "9 digits"),
        (f"otpauth://totp/x:a?{s}&period=0", "period 0"),
        ("otpauth://totp/x:a?issuer=x", "no secret"),
        (f"otpauth://hotp/x:a?{s}", "no counter"),
        ("otpauth://totp/x:a?secret=JBSWY3DP1", "bad base32"),
        (f"otpauth://totp/x%G0:a?{s}", "bad percent-encoding"),
        (f"otpauth://totp/x:a?{s}&issuer=y", "an issuer mismatch"),
        ("otpauth://totp/x:a?secret=" + b32(os.urandom(129)), "a 129-byte secret"),
        (f"otpauth://totp/x:a?{s}&{s}", "a repeated secret"),
    ]:
        try:
            refused(store, "oath.invalidURI", "oath", "add", uri)
        except Fail as e:
            raise Fail(f"{why}: {e}") from e
    # The same name again: refused without --force, replaced with it.
    first = pyotp.TOTP(pyotp.random_base32())
    cli(store, "oath", "add", first.provisioning_uri(name="dup", issuer_name="E"))
    second = pyotp.TOTP(pyotp.random_base32())
    rc, _, err = run(store, "oath", "add", second.provisioning_uri(name="dup", issuer_name="E"))
    expect(rc == 2 and "--force" in err, f"a second credential of the same name: exit {rc}, {err.strip()[:200]}")
    cli(store, "oath", "add", second.provisioning_uri(name="dup", issuer_name="E"), "--force")
    expect(cli(store, "oath", "code", "E:dup", "--time", "1234567890") == second.at(utc(1234567890)), "--force did not replace the secret")
    refused(store, "oath.noSuchCredential", "oath", "code", "nobody")
    refused(store, "oath.noSuchCredential", "oath", "delete", "nobody")
    refused(store, "oath.invalidParameter", "oath", "code", "E:dup", "--time=-5")
    expect(cli(store, "oath", "delete", "E:dup") == "deleted E:dup", "delete printed something else")
    refused(store, "oath.noSuchCredential", "oath", "code", "E:dup")


def main():
    print(f"pyotp {getattr(pyotp, '__version__', '?')}")
    checks.group("V RFC 4226 appendix D: pyotp computes the 10 HOTP values of Vectors/oath/rfc4226.json", check_rfc4226)
    checks.group("V RFC 6238 appendix B: pyotp computes the 18 TOTP rows of Vectors/oath/rfc6238.json", check_rfc6238)
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        checks.fail(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        return checks.summary()
    times = TIMES + [int(time.time())]
    expected = {}
    with tempfile.TemporaryDirectory(prefix="oath-pyotp-") as tmp:
        store = os.path.join(tmp, "st")
        for algorithm in DIGESTS:
            for digits in (6, 7, 8):
                for period in (30, 60):
                    if checks.group(f"P TOTP {algorithm}, {digits} digits, {period} s: pyotp's URI added, {len(times)} times agree",
                                    pyotp_totp, store, algorithm, digits, period, times):
                        expected[f"{ISSUER}:totp-{algorithm.lower()}-{digits}-{period}@example.org"] = \
                            ["totp", algorithm, f"{digits} digits", f"period {period}"]
        for algorithm in DIGESTS:
            for digits in (6, 7, 8):
                start = 5 if digits == 7 else 0
                if checks.group(f"P HOTP {algorithm}, {digits} digits, from counter {start}: five codes in a row agree",
                                pyotp_hotp, store, algorithm, digits, start):
                    expected[f"{ISSUER}:hotp-{algorithm.lower()}-{digits}@example.org"] = \
                        ["hotp", algorithm, f"{digits} digits", f"counter {start + 5}"]
        now = int(time.time())
        for algorithm in DIGESTS:
            for digits in (6, 7, 8):
                for period in (30, 60):
                    if checks.group(f"G TOTP {algorithm}, {digits} digits, {period} s: pyotp.parse_uri reads the generated URI, codes agree",
                                    generated_totp, store, algorithm, digits, period, [0, 1234567890, 20000000000, now]):
                        expected[f"{GENERATED_ISSUER}:gen-{algorithm.lower()}-{digits}-{period}"] = \
                            ["totp", algorithm, f"{digits} digits", f"period {period}"]
        for algorithm, start in (("SHA1", 0), ("SHA256", 3), ("SHA512", 0)):
            if checks.group(f"G HOTP {algorithm} from counter {start}: pyotp.parse_uri reads the generated URI, three codes agree",
                            generated_hotp, store, algorithm, start):
                expected[f"{GENERATED_ISSUER}:gen-hotp-{algorithm.lower()}"] = ["hotp", algorithm, "8 digits", f"counter {start + 3}"]
        checks.group("G --generate --aztec FILE.png: mode 0600, zxing-cpp decodes the printed URI", generated_aztec, store, tmp)
        checks.group("P a given URI with --aztec (SVG and PNG, mode 0600; zxing-cpp reads pyotp's secret back) and --verification (listed, codes agree)",
                     given_aztec, store, tmp)
        checks.group(f"L oath list: {len(expected)} credentials with type, algorithm, digits, period or counter; no secret",
                     listing, store, expected)
        checks.group("E refusals: malformed URIs, a name taken, unknown names, a negative time: exit 2, one tokenmint: line",
                     refusals, store)
        checks.group("S every secret used is sealed at rest: none, raw or base32, in the store's files", sealed_at_rest, store)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
