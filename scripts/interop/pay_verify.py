#!/usr/bin/env python3
"""Independent checks of TokenMint's WhitelabelPay enrolment and payment tokens.

Written from the public token format only, not from TokenMint's code:

  enrolment token  01/<tenant UUID>/<base64url(Ed25519 public key)>/<reference UUID>
  payment token    02/<unsigned>/<epochSeconds>/<base64url(signature)>

The signature is Ed25519 over the UTF-8 bytes of "<unsigned>/<epochSeconds>".
base64url uses the URL-safe alphabet and TokenMint emits it WITH '=' padding
(a key is 44 characters ending in "=", a signature 88 ending in "=="); the
parsers here also accept the unpadded form, and `check_padding` tells them
apart. Offline tokens have the unsigned part off.<meansId>.<sequence>.<nonce>
(sequence decimal and strictly increasing per device, nonce 12 base64url chars).

As a script it drives `tokenmint pay` through a temporary store (init with an
offline limit of 5, means add, enrol, push, online and offline mints, the
limit, online, offline again), verifies every token it got with pyca/
cryptography, then cross-checks `tokenmint pay verify` (valid, replay,
tampered, another device). The CLI is taken from $TOKENMINT (default
.build/debug/tokenmint). Prints one line per check and ends with
`N passed, M failed` (exit 1 if anything failed).

The functions (parse_enrolment, parse_payment, parse_offline_unsigned,
check_padding, verify_payment) are imported by scripts/crash/pay_kill.py.
"""
import argparse
import base64
import binascii
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")

ENROLMENT_VERSION = "01"
PAYMENT_VERSION = "02"
KEY_LEN = 32                 # Ed25519 public key
SIG_LEN = 64                 # Ed25519 signature
NONCE_CHARS = 12             # base64url characters in an offline nonce
OFFLINE_LIMIT_EXIT = 3
LIMIT_WORD = "offlineTokenLimitReached"
EPOCH_SLACK = 120            # seconds either side of "now" an epoch may be

UUID_RE = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")
B64URL_RE = re.compile(r"^[A-Za-z0-9_-]*(={0,2})$")
NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{%d}$" % NONCE_CHARS)
DIGITS_RE = re.compile(r"^[0-9]+$")


class TokenError(ValueError):
    """A token that does not parse or does not verify."""


# ---- format ------------------------------------------------------------------

def b64url_decode(text, length, what):
    """Decode URL-safe base64, padded or unpadded, to exactly `length` bytes.

    Rejects the standard alphabet ('+', '/'), wrong or partial padding, and
    non-canonical encodings (stray bits in the last character), so that one
    byte string has exactly two accepted spellings: padded and unpadded.
    """
    m = B64URL_RE.match(text)
    if not m:
        raise TokenError(f"{what}: not URL-safe base64: {text!r}")
    body = text.rstrip("=")
    if m.group(1) and len(text) % 4 != 0:
        raise TokenError(f"{what}: wrong '=' padding ({len(text)} chars)")
    if len(body) % 4 == 1:
        raise TokenError(f"{what}: impossible base64 length {len(body)}")
    padded = body + "=" * (-len(body) % 4)
    if m.group(1) and padded != text:
        raise TokenError(f"{what}: wrong '=' padding")
    try:
        raw = base64.urlsafe_b64decode(padded)
    except (binascii.Error, ValueError) as e:
        raise TokenError(f"{what}: bad base64: {e}") from None
    if base64.urlsafe_b64encode(raw).decode().rstrip("=") != body:
        raise TokenError(f"{what}: non-canonical base64 (stray bits in the last character)")
    if len(raw) != length:
        raise TokenError(f"{what}: decodes to {len(raw)} bytes, want {length}")
    return raw


def check_padding(segment, length):
    """The padding rule: `segment` must be exactly what Python's
    base64.urlsafe_b64encode emits for `length` bytes (88 chars ending "=="
    for a 64-byte signature, 44 ending "=" for a 32-byte key).
    Returns None if it is, else a description of what is wrong."""
    try:
        raw = b64url_decode(segment, length, "segment")
    except TokenError as e:
        return str(e)
    want = base64.urlsafe_b64encode(raw).decode()
    if segment != want:
        pad = len(want) - len(want.rstrip("="))
        return (f"not the padded form: {len(segment)} chars, want {len(want)} "
                f"ending in {'=' * pad!r}")
    return None


def parse_uuid(text, what):
    if not UUID_RE.match(text):
        raise TokenError(f"{what}: not a hyphenated UUID: {text!r}")
    return uuid.UUID(text)


def parse_enrolment(token):
    """01/<tenant>/<key>/<reference> -> dict(tenant, reference, key_bytes,
    key_segment, public_key). Raises TokenError."""
    if not isinstance(token, str):
        raise TokenError("enrolment token: not a string")
    parts = token.split("/")
    if len(parts) != 4:
        raise TokenError(f"enrolment token: {len(parts)} '/'-separated parts, want 4")
    version, tenant, key_segment, reference = parts
    if version != ENROLMENT_VERSION:
        raise TokenError(f"enrolment token: version {version!r}, want {ENROLMENT_VERSION!r}")
    key_bytes = b64url_decode(key_segment, KEY_LEN, "enrolment key")
    return dict(tenant=parse_uuid(tenant, "tenant"),
                reference=parse_uuid(reference, "reference"),
                key_bytes=key_bytes, key_segment=key_segment,
                public_key=Ed25519PublicKey.from_public_bytes(key_bytes))


def parse_payment(token):
    """02/<unsigned>/<epoch>/<sig> -> dict(unsigned, epoch, epoch_text,
    signature, sig_segment, message). Raises TokenError."""
    if not isinstance(token, str):
        raise TokenError("payment token: not a string")
    parts = token.split("/")
    if len(parts) != 4:
        raise TokenError(f"payment token: {len(parts)} '/'-separated parts, want 4")
    version, unsigned, epoch_text, sig_segment = parts
    if version != PAYMENT_VERSION:
        raise TokenError(f"payment token: version {version!r}, want {PAYMENT_VERSION!r}")
    if not unsigned:
        raise TokenError("payment token: empty unsigned part")
    if not DIGITS_RE.match(epoch_text):
        raise TokenError(f"payment token: epoch is not all digits: {epoch_text!r}")
    signature = b64url_decode(sig_segment, SIG_LEN, "signature")
    return dict(unsigned=unsigned, epoch=int(epoch_text), epoch_text=epoch_text,
                signature=signature, sig_segment=sig_segment,
                message=f"{unsigned}/{epoch_text}".encode("utf-8"))


def parse_offline_unsigned(unsigned):
    """off.<meansId>.<sequence>.<nonce> -> (means_id, sequence, nonce), or
    None if `unsigned` does not start with "off." (not an offline token).
    The means ID is everything between "off." and the last two fields, so an
    ID containing '.' still parses. Raises TokenError if malformed."""
    if not unsigned.startswith("off."):
        return None
    rest = unsigned[len("off."):]
    fields = rest.rsplit(".", 2)
    if len(fields) != 3:
        raise TokenError(f"offline unsigned part: want off.<meansId>.<sequence>.<nonce>: {unsigned!r}")
    means_id, seq_text, nonce = fields
    if not means_id:
        raise TokenError(f"offline unsigned part: empty means ID: {unsigned!r}")
    if not DIGITS_RE.match(seq_text):
        raise TokenError(f"offline unsigned part: sequence is not decimal: {seq_text!r}")
    if not NONCE_RE.match(nonce):
        raise TokenError(f"offline unsigned part: nonce is not {NONCE_CHARS} base64url chars: {nonce!r}")
    return means_id, int(seq_text), nonce


def public_key_of(key):
    """An Ed25519PublicKey from a key object, 32 raw bytes, a parsed enrolment
    dict or an enrolment token string."""
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, (bytes, bytearray)):
        return Ed25519PublicKey.from_public_bytes(bytes(key))
    if isinstance(key, dict):
        return key["public_key"]
    return parse_enrolment(key)["public_key"]


def verify_payment(token, key, require_padding=True):
    """Parse and verify a payment token against `key` (see public_key_of).
    With require_padding, the signature must be in the padded form TokenMint
    promises. Returns the parsed dict (plus 'offline': the triple or None).
    Raises TokenError."""
    p = parse_payment(token)
    if "/" in p["unsigned"]:            # cannot happen after split, kept for clarity
        raise TokenError("payment token: '/' in the unsigned part")
    if require_padding:
        bad = check_padding(p["sig_segment"], SIG_LEN)
        if bad:
            raise TokenError(f"signature padding: {bad}")
    try:
        public_key_of(key).verify(p["signature"], p["message"])
    except InvalidSignature:
        raise TokenError("signature does not verify") from None
    p["offline"] = parse_offline_unsigned(p["unsigned"])
    return p


def flip_sig_char(token, index=10):
    """The token with one signature character replaced (well inside the
    segment, so the decoded bytes really change)."""
    head, sig = token.rsplit("/", 1)
    c = sig[index]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    new = alphabet[(alphabet.index(c) + 1) % 64] if c in alphabet else "A"
    return f"{head}/{sig[:index]}{new}{sig[index + 1:]}"


def bump_epoch(token, delta=1):
    """The token with its epoch changed (signature left alone)."""
    v, unsigned, epoch, sig = token.split("/")
    return f"{v}/{unsigned}/{int(epoch) + delta}/{sig}"


# ---- TokenMint CLI -------------------------------------------------------------

passed = failed = 0


class Fail(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Fail(msg)


def record(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}" + (f": {detail}" if detail else ""))
    else:
        failed += 1
        print(f"FAIL  {name}" + (f": {detail}" if detail else ""))
    sys.stdout.flush()
    return ok


def check(name, fn, *args):
    """Run fn(*args); it returns a detail string or raises Fail/TokenError."""
    try:
        detail = fn(*args)
        return record(True, name, detail or "")
    except (Fail, TokenError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return record(False, name, str(e))


def tm(*args, timeout=120):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True, timeout=timeout)


def tail(text, n=3):
    return " | ".join(text.strip().splitlines()[-n:])[-400:]


def tm_ok(*args):
    p = tm(*args)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p.stderr)}")
    return p.stdout.strip()


def status(store):
    out = tm_ok("pay", "status", "--store", store)
    s = json.loads(out)
    expect(isinstance(s, dict), f"status is not a JSON object: {out[:200]!r}")
    for field in ("state", "availableOfflineTokensCount", "offlineTokenLimit",
                  "offlineMintedTokenCount"):
        expect(field in s, f"status has no {field!r}: {out[:300]}")
    return s


def setup_device(store, tenant, reference, means_id, limit):
    """init, means add, enrol, push; returns (init JSON, enrolment token)."""
    out = tm_ok("pay", "init", "--store", store, "--tenant", str(tenant),
                "--reference", str(reference), "--offline-limit", str(limit))
    init_status = json.loads(out)
    tm_ok("pay", "means", "add", "--store", store, means_id)
    enrolment = tm_ok("pay", "enrol", "--store", store)
    tm_ok("pay", "push", "--store", store, '{"aps":{},"yp-type":"enrolment-succeeded.v1"}')
    return init_status, enrolment


def mint(store, offline=False):
    args = ["pay", "mint", "--store", store] + (["--offline"] if offline else [])
    return tm(*args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--online-mints", type=int, default=3, help="online tokens to mint (default 3)")
    ap.add_argument("--means-id", default="means-1", help="payment means ID to add (default means-1)")
    args = ap.parse_args()

    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1

    limit = 5
    means_id = args.means_id
    with tempfile.TemporaryDirectory(prefix="tokenmint-pay-") as tmp:
        store = os.path.join(tmp, "device-a")
        tenant, reference = uuid.uuid4(), uuid.uuid4()
        try:
            run(tmp, store, tenant, reference, means_id, limit, args.online_mints)
        except (Fail, TokenError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            record(False, "setup/flow stopped", str(e))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def run(tmp, store, tenant, reference, means_id, limit, n_online):
    init_status, enrolment = setup_device(store, tenant, reference, means_id, limit)
    record(isinstance(init_status, dict), "init prints a status JSON object",
           f"state={init_status.get('state')!r}" if isinstance(init_status, dict) else repr(init_status))

    # -- enrolment token
    enrol = {}

    def c_enrol():
        enrol.update(parse_enrolment(enrolment))
        expect(enrol["tenant"] == tenant, f"tenant {enrol['tenant']} != {tenant}")
        expect(enrol["reference"] == reference, f"reference {enrol['reference']} != {reference}")
        bad = check_padding(enrol["key_segment"], KEY_LEN)
        expect(bad is None, f"key segment: {bad}")
        return f"tenant and reference match, key {enrol['key_segment']} (padded, 44 chars)"
    if not check("enrolment token parses (01/tenant/key/reference)", c_enrol):
        raise Fail("no usable enrolment token; cannot go on")
    key = enrol["public_key"]

    def c_active():
        s = status(store)
        expect(str(s["state"]).lower() == "active", f"state {s['state']!r} after push, want 'active'")
        expect(s["offlineTokenLimit"] == limit, f"offlineTokenLimit {s['offlineTokenLimit']}, want {limit}")
        expect(s["offlineMintedTokenCount"] == 0, f"offlineMintedTokenCount {s['offlineMintedTokenCount']}, want 0")
        return f"state={s['state']!r}, limit {limit}, minted 0"
    check("status after push", c_active)

    t_start = time.time()
    tokens = []            # (label, token) in mint order
    online_tokens, offline_tokens = [], []

    def take(p, label):
        expect(p.returncode == 0, f"exit {p.returncode}: {tail(p.stderr)}")
        lines = p.stdout.strip().splitlines()
        expect(len(lines) == 1, f"want one token line on stdout, got {len(lines)}")
        tokens.append((label, lines[0]))
        return lines[0]

    # -- online mints
    def c_online():
        for i in range(n_online):
            online_tokens.append(take(mint(store), f"online #{i + 1}"))
        return f"{n_online} tokens"
    check(f"mint (online) x{n_online}", c_online)

    # -- offline mints up to the limit, then the limit
    def c_offline(n, first_label):
        for i in range(n):
            offline_tokens.append(take(mint(store, offline=True), f"offline #{first_label + i}"))
        return f"{n} tokens"
    check(f"mint --offline x{limit} (limit {limit})", c_offline, limit, 1)

    def c_limit():
        p = mint(store, offline=True)
        expect(p.returncode == OFFLINE_LIMIT_EXIT, f"exit {p.returncode}, want {OFFLINE_LIMIT_EXIT}")
        expect(LIMIT_WORD in p.stderr, f"{LIMIT_WORD!r} not on stderr: {tail(p.stderr)!r}")
        expect(p.stdout.strip() == "", f"stdout not empty: {p.stdout.strip()[:120]!r}")
        return f"exit 3, {LIMIT_WORD} on stderr, nothing on stdout"
    check(f"mint --offline #{limit + 1} is refused", c_limit)

    def c_status_full():
        s = status(store)
        expect(s["offlineMintedTokenCount"] == limit, f"offlineMintedTokenCount {s['offlineMintedTokenCount']}, want {limit}")
        expect(s["availableOfflineTokensCount"] == 0, f"availableOfflineTokensCount {s['availableOfflineTokensCount']}, want 0")
        return f"minted {limit}, available 0"
    check("status at the limit", c_status_full)

    def c_online_reset():
        tm_ok("pay", "online", "--store", store)
        s = status(store)
        expect(s["offlineMintedTokenCount"] == 0, f"offlineMintedTokenCount {s['offlineMintedTokenCount']}, want 0")
        expect(s["availableOfflineTokensCount"] == limit,
               f"availableOfflineTokensCount {s['availableOfflineTokensCount']}, want {limit}")
        return f"minted 0, available {limit}"
    check("online resets the offline count", c_online_reset)

    check("mint --offline x2 after online", c_offline, 2, limit + 1)
    t_end = time.time()

    # -- independent verification of everything minted
    def c_verify_all():
        for label, tok in tokens:
            try:
                p = verify_payment(tok, key)
            except TokenError as e:
                raise Fail(f"{label}: {e}: {tok}") from None
            expect(t_start - EPOCH_SLACK <= p["epoch"] <= t_end + EPOCH_SLACK,
                   f"{label}: epoch {p['epoch']} not within {EPOCH_SLACK} s of now")
        return f"{len(tokens)} tokens: layout, padded 88-char signature, Ed25519 signature, epoch within {EPOCH_SLACK} s"
    check("every token verifies independently", c_verify_all)

    def c_online_layout():
        expect(online_tokens, "no online tokens")
        for tok in online_tokens:
            u = parse_payment(tok)["unsigned"]
            expect(not u.startswith("off."), f"online token has an offline unsigned part: {u!r}")
        expect(len(set(online_tokens)) == len(online_tokens), "two online tokens are identical")
        return f"{len(online_tokens)} distinct, none off.* (e.g. unsigned {parse_payment(online_tokens[0])['unsigned']!r})"
    check("online tokens: not offline-shaped, distinct", c_online_layout)

    def c_offline_layout():
        expect(len(offline_tokens) == limit + 2, f"{len(offline_tokens)} offline tokens, want {limit + 2}")
        seqs, nonces = [], []
        for tok in offline_tokens:
            off = parse_offline_unsigned(parse_payment(tok)["unsigned"])
            expect(off is not None, f"offline token without off. prefix: {tok}")
            m, seq, nonce = off
            expect(m == means_id, f"means ID {m!r}, want {means_id!r}")
            seqs.append(seq)
            nonces.append(nonce)
        expect(all(a < b for a, b in zip(seqs, seqs[1:])), f"sequences not strictly increasing: {seqs}")
        expect(len(set(nonces)) == len(nonces), "a nonce repeats")
        return f"off.{means_id}.<seq>.<12-char nonce>; sequences {seqs} (across the reset)"
    check("offline tokens: layout, sequences distinct and increasing", c_offline_layout)

    def c_tamper_local():
        tok = offline_tokens[0] if offline_tokens else online_tokens[0]
        bad = flip_sig_char(tok)
        try:
            verify_payment(bad, key)
        except TokenError as e:
            msg = str(e)
        else:
            raise Fail("a token with a flipped signature character verified")
        try:
            verify_payment(bump_epoch(tok), key)
        except TokenError:
            pass
        else:
            raise Fail("a token with a changed epoch verified")
        return f"flipped signature character -> {msg}; changed epoch -> rejected"
    check("tampered token fails independent verification", c_tamper_local)

    # -- cross-checks with `tokenmint pay verify`
    def cli_verify(tok, enrolment_token, ledger):
        args = ["pay", "verify", "--store", store, "--enrolment", enrolment_token]
        if ledger:
            args += ["--ledger", ledger]
        return tm(*args, tok)

    def expect_valid(p, label):
        expect(p.returncode == 0, f"{label}: exit {p.returncode}: {tail(p.stderr)}")
        json.loads(p.stdout)   # prints JSON

    def expect_rejected(p, label):
        expect(p.returncode == 1, f"{label}: exit {p.returncode}, want 1 (stdout {p.stdout.strip()[:120]!r})")
        expect(p.stderr.strip(), f"{label}: no reason on stderr")
        return tail(p.stderr, 1)

    ledger = os.path.join(tmp, "ledger-main")

    def c_cli_valid():
        for label, tok in tokens:
            expect_valid(cli_verify(tok, enrolment, ledger), label)
        return f"{len(tokens)} tokens exit 0 with JSON"
    check("pay verify: every token valid (with --ledger)", c_cli_valid)

    def c_cli_replay():
        reasons = []
        for label, tok in (tokens[0], tokens[-1]):
            reasons.append(expect_rejected(cli_verify(tok, enrolment, ledger), f"{label} replay"))
        return "exit 1: " + " / ".join(reasons)
    check("pay verify: replay with the same --ledger is rejected", c_cli_replay)

    def c_cli_tamper():
        fresh = take(mint(store, offline=True), "offline (tamper test)")
        led = os.path.join(tmp, "ledger-tamper")
        r1 = expect_rejected(cli_verify(flip_sig_char(fresh), enrolment, led), "flipped signature")
        r2 = expect_rejected(cli_verify(bump_epoch(fresh), enrolment, led), "changed epoch")
        expect_valid(cli_verify(fresh, enrolment, led), "the untampered token afterwards")
        return f"exit 1 ({r1} / {r2}); the genuine token still verifies"
    check("pay verify: tampered tokens are rejected", c_cli_tamper)

    def c_cli_other_device():
        store_b = os.path.join(tmp, "device-b")
        _, enrol_b = setup_device(store_b, tenant, uuid.uuid4(), means_id, limit)
        p = mint(store_b, offline=True)
        expect(p.returncode == 0, f"device B mint exited {p.returncode}: {tail(p.stderr)}")
        tok_b = p.stdout.strip()
        try:
            verify_payment(tok_b, key)
        except TokenError:
            pass
        else:
            raise Fail("device B's token verified independently with device A's key")
        verify_payment(tok_b, enrol_b)
        r = expect_rejected(cli_verify(tok_b, enrolment, os.path.join(tmp, "ledger-b1")),
                            "device B token with device A enrolment")
        expect_valid(cli_verify(tok_b, enrol_b, os.path.join(tmp, "ledger-b2")),
                     "device B token with device B enrolment")
        return f"exit 1 with A's enrolment ({r}); exit 0 with B's"
    check("pay verify: a token from another device is rejected", c_cli_other_device)


if __name__ == "__main__":
    sys.exit(main())
