#!/usr/bin/env python3
"""Regression harness for the adversarial review (security issue 14): every
attack the adversary ran against TokenMint, replayed through the CLI.

Each check fails against the behaviour the attack exploited and passes
against the fixed CLI:

 1 Offline grants and slots: a compromised device (a Python Ed25519 key
   enrolled by hand) signs whatever it likes. A counter value is spent once
   whatever the nonce, non-canonical counters and mis-cased labels are
   refused, a grant of 2 yields at most 2 offline tokens, an issued online
   part is good for one token and a part never issued for none. Without
   --require-grant a counter is still spent once.
 2 Secret files: keygen --out never shows a key file with group/other bits
   (a poller watches the folder while 30 keygens run under umask 0), never
   replaces an existing file without --force.
 3 Credential takeover: a registration that reuses a victim's credential ID
   with the attacker's key is refused by `auth passkey` and by
   `fido2 verify-registration`; the victim's passkey keeps working.
 4 --out and special files: a FIFO is written, not replaced; a symbolic link
   is refused (written through only with --force, the link kept); a
   character device stays one.
 5 Device state tampering: the sealed device record renamed, flipped,
   deleted, the sealed configuration replaced, the counters table zeroed or
   emptied, the master key deleted or opened to others.
 6 Lost output: a token, answer or key that cannot be written is an error,
   and a minted token that was never delivered is counted as wasted.
 7 Integer traps: extreme --ttl/--now/--lifetime/--window/exp values give
   exit 1 or 2, never a trap; exp = Int64.max verifies with a leeway.
 8 CLI relying party: a challenge is good for one assertion, also when the
   signCount stays 0.
 9 A 1,023-byte credential ID is registered and used.
10 Attacker text (a kid, a push type, an origin) reaches stderr escaped.
11 Strict inputs: PEM with bytes after the DER key or a second block, a
   rawId that is not the credential ID, tokenBinding "present".

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint); everything
happens in a fresh temporary folder. Prints one line per check and ends with
`N passed, M failed` (exit 1 if anything failed).
"""
import base64
import concurrent.futures
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from fido2 import cbor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tmcli import TOKENMINT, Checks, Fail, b64d, b64u, command, expect  # noqa: E402

RP, ORIGIN = "tokenmint.test", "https://tokenmint.test"
PUSH = '{"aps":{},"yp-type":"enrolment-succeeded.v1"}'
INT64_MAX, INT64_MIN = "9223372036854775807", "-9223372036854775808"

checks = Checks()


# ---- the CLI -----------------------------------------------------------------

def tm(*args, store=None, stdin=None, stdout=None, umask=-1, timeout=60):
    """Runs the CLI: (exit code, stdout, stderr). Output is decoded with
    surrogateescape, so err.encode("utf-8", "surrogateescape") gives the
    exact bytes. `stdout` may be a file to write to instead (then "" is
    returned for it)."""
    argv = command(store, list(args)) if store else [TOKENMINT, *args]
    proc = subprocess.run(argv, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE,
                          umask=umask, timeout=timeout)
    return proc.returncode, text(proc.stdout), text(proc.stderr)


def text(raw):
    return (raw or b"").decode("utf-8", "surrogateescape")


def ok(*args, **kw):
    rc, out, err = tm(*args, **kw)
    if rc != 0:
        raise Fail(f"`{' '.join(args[:3])}` failed ({rc}): {err.strip()[-300:]}")
    return out


def to_full(*args, **kw):
    """Runs the CLI with standard output on /dev/full."""
    with open("/dev/full", "wb") as full:
        return tm(*args, stdout=full, **kw)


def refused_cleanly(rc, codes=(1, 2)):
    """An exit status the CLI chose, not a signal or a trap."""
    return rc in codes


# ---- WhitelabelPay -------------------------------------------------------------

def pad_b64u(data):
    return base64.urlsafe_b64encode(data).decode()


def nonce():
    return b64u(os.urandom(9))  # 12 base64url characters


class ForgedDevice:
    """A compromised device: its Ed25519 key is in our hands, so it signs any
    payment token it likes."""

    def __init__(self):
        self.key = ed25519.Ed25519PrivateKey.generate()
        self.tenant, self.reference = str(uuid.uuid4()), str(uuid.uuid4())
        raw = self.key.public_key().public_bytes_raw()
        self.enrolment = f"01/{self.tenant}/{pad_b64u(raw)}/{self.reference}"

    def token(self, unsigned, epoch=None):
        epoch = int(time.time()) if epoch is None else epoch
        message = f"{unsigned}/{epoch}"
        return f"02/{message}/{pad_b64u(self.key.sign(message.encode()))}"

    def offline(self, counter, means="M1"):
        return self.token(f"off.{means}.{counter}.{nonce()}")


def pay_verify(store, device, token, *extra):
    return tm("pay", "verify", "--device", device, *extra, token, store=store)[0]


def pay_device(store, limit=5):
    """A device store set up the CLI way; returns its enrolment token."""
    ok("pay", "init", "--tenant", str(uuid.uuid4()), "--reference", str(uuid.uuid4()),
       "--offline-limit", str(limit), store=store)
    ok("pay", "means", "add", "M1", store=store)
    enrolment = ok("pay", "enrol", store=store).strip()
    ok("pay", "push", PUSH, store=store)
    return enrolment


def pay_status(store):
    return json.loads(ok("pay", "status", store=store))


def offline_counter(token):
    return int(token.split("/")[1].split(".")[2])


# ---- WebAuthn --------------------------------------------------------------------

def sha256(data):
    return hashlib.sha256(data).digest()


def client_data(ctype, challenge, origin=ORIGIN, **extra):
    return json.dumps({"type": ctype, "challenge": b64u(challenge), "origin": origin, "crossOrigin": False, **extra},
                      separators=(",", ":")).encode()


class Authenticator:
    """A hand-made ES256 authenticator: a cryptography key, python-fido2's
    CBOR encoder, attestation "none"."""

    def __init__(self, cred_id=None):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.cred_id = cred_id if cred_id is not None else os.urandom(32)

    def cose_key(self):
        nums = self.key.public_key().public_numbers()
        return cbor.encode({1: 2, 3: -7, -1: 1, -2: nums.x.to_bytes(32, "big"), -3: nums.y.to_bytes(32, "big")})

    def registration(self, challenge, origin=ORIGIN, raw_id=None, sign_count=0, **client_extra):
        auth_data = (sha256(RP.encode()) + bytes([0x41]) + sign_count.to_bytes(4, "big") + bytes(16)
                     + len(self.cred_id).to_bytes(2, "big") + self.cred_id + self.cose_key())
        att = cbor.encode({"fmt": "none", "attStmt": {}, "authData": auth_data})
        raw = b64u(self.cred_id if raw_id is None else raw_id)
        return {"id": raw, "rawId": raw, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64u(client_data("webauthn.create", challenge, origin, **client_extra)),
                             "attestationObject": b64u(att), "transports": ["usb"]}}

    def assertion(self, challenge, sign_count, origin=ORIGIN):
        auth_data = sha256(RP.encode()) + bytes([0x01]) + sign_count.to_bytes(4, "big")
        cdj = client_data("webauthn.get", challenge, origin)
        sig = self.key.sign(auth_data + sha256(cdj), ec.ECDSA(hashes.SHA256()))
        raw = b64u(self.cred_id)
        return {"id": raw, "rawId": raw, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64u(cdj), "authenticatorData": b64u(auth_data),
                             "signature": b64u(sig), "userHandle": None}}


def challenge():
    return os.urandom(32)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def beside(store, prefix):
    """A new JSON file name next to the state folder `store`."""
    folder = os.path.dirname(store)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{prefix}-{b64u(os.urandom(6))}.json")


def rp_verify(kind, store, cred, ch, origin=ORIGIN):
    """fido2 verify-registration / verify-assertion: (exit code, stdout, stderr)."""
    path = write_json(beside(store, kind), cred)
    return tm("fido2", f"verify-{kind}", "--rp", RP, "--origin", origin, f"--challenge={b64u(ch)}", "--in", path,
              store=store)


def passkey(store, account, cred, ch):
    path = write_json(beside(store, "passkey"), cred)
    return tm("auth", "passkey", "--account", account, f"--challenge={b64u(ch)}", "--in", path, store=store)


def cli_register(store, ch, user="victim"):
    """A credential made by the CLI's own authenticator."""
    return json.loads(ok("fido2", "register", "--rp", RP, "--origin", ORIGIN, f"--challenge={b64u(ch)}",
                         "--user-id", user.encode().hex(), "--user-name", user, store=store))


def cli_assert(store, ch, credential):
    return json.loads(ok("fido2", "assert", "--rp", RP, "--origin", ORIGIN, f"--challenge={b64u(ch)}",
                         f"--credential={credential}", store=store))


# ---- 1: offline grants, slots, issued online parts ------------------------------------

def grant_setup(ctx, tmp):
    device = ForgedDevice()
    store = os.path.join(tmp, "1-verifier", "state")
    device_id = ok("pay", "verifier", "enrol", device.enrolment, store=store).strip()
    expect(device_id == device.reference, f"device ID {device_id!r}, expected the reference {device.reference}")
    grant = json.loads(ok("pay", "verifier", "grant", "--device", device_id, "--count", "2", store=store))
    expect(grant.get("first") == 1 and grant.get("count") == 2, f"grant {grant}")
    ctx.update(device=device, store=store, id=device_id, accepted=[])


def grant_verify(ctx, token):
    rc = pay_verify(ctx["store"], ctx["id"], token, "--require-grant")
    if rc == 0 and "/off." in token:
        ctx["accepted"].append(token)
    return rc


def check_noncanonical_counters(ctx, tmp):
    grant_setup(ctx, tmp)
    # Before counter 1 is spent, so that only the counter's form can refuse them.
    results = {c: grant_verify(ctx, ctx["device"].token(f"off.M1.{c}.{nonce()}"))
               for c in ("01", "001", "+1", "-1", "0")}
    expect(all(rc == 1 for rc in results.values()), f"exit codes by counter (want 1 each): {results}")


def check_counter_once(ctx):
    expect("device" in ctx, "no forged device (setup failed)")
    results = [grant_verify(ctx, ctx["device"].offline(1)) for _ in range(6)]
    expect(results.count(0) == 1, f"counter 1 with six nonces: exit codes {results}, want exactly one 0")
    expect(all(rc in (0, 1) for rc in results), f"exit codes {results}")


def check_labels(ctx):
    expect("device" in ctx, "no forged device (setup failed)")
    results = {u: grant_verify(ctx, ctx["device"].token(u))
               for u in ("on.M1.5.abcdefghijkl", "OFF.M1.1.abcdefghijkl", "Off.M1.2.abcdefghijkl", "off")}
    expect(all(rc == 1 for rc in results.values()), f"exit codes by unsigned part (want 1 each): {results}")


def check_grant_bound(ctx):
    expect("device" in ctx, "no forged device (setup failed)")
    two = [grant_verify(ctx, ctx["device"].offline(2)) for _ in range(2)]
    expect(two == [0, 1], f"counter 2 twice: exit codes {two}, want [0, 1]")
    three = grant_verify(ctx, ctx["device"].offline(3))
    expect(three == 1, f"counter 3 (never granted): exit {three}, want 1")
    expect(len(ctx["accepted"]) <= 2,
           f"{len(ctx['accepted'])} offline tokens accepted on a grant of 2: {ctx['accepted']}")


def check_online_parts(ctx):
    expect("device" in ctx, "no forged device (setup failed)")
    device = ctx["device"]
    part = ok("pay", "verifier", "issue", "--device", ctx["id"], "--means", "M1", store=ctx["store"]).strip()
    expect(part.startswith("on.M1."), f"issued part {part!r}")
    now = int(time.time())
    first = grant_verify(ctx, device.token(part, now))
    again = grant_verify(ctx, device.token(part, now - 1))
    never = grant_verify(ctx, device.token(f"on.M1.{b64u(os.urandom(16))}", now))
    expect((first, again, never) == (0, 1, 1),
           f"issued part / same part, other epoch / never issued: exit codes {(first, again, never)}, want (0, 1, 1)")


def check_counter_once_without_grants(tmp):
    device = ForgedDevice()
    store = os.path.join(tmp, "1-plain-verifier", "state")
    device_id = ok("pay", "verifier", "enrol", device.enrolment, store=store).strip()
    results = [pay_verify(store, device_id, device.offline(1)) for _ in range(2)]
    expect(results == [0, 1], f"counter 1 twice without --require-grant: exit codes {results}, want [0, 1]")


# ---- 2: secret files ------------------------------------------------------------------

def check_keygen_modes(tmp):
    folder = os.path.join(tmp, "2-keys")
    os.mkdir(folder)
    stop, seen, exposed = threading.Event(), [0], []

    def poll():
        while not stop.is_set():
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        mode = os.lstat(entry.path).st_mode
                    except FileNotFoundError:
                        continue  # a temporary file renamed away meanwhile
                    seen[0] += 1
                    if mode & 0o077:
                        exposed.append((entry.name, oct(mode & 0o777)))

    variants = [["--alg", "EdDSA"], ["--alg", "ES256"], ["--alg", "EdDSA", "--jwk"], ["--alg", "ES256", "--jwk"]]
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            jobs = [pool.submit(tm, "keygen", *variants[i % len(variants)], "--out", os.path.join(folder, f"key-{i}"),
                                umask=0)
                    for i in range(30)]
            results = [job.result() for job in jobs]
    finally:
        stop.set()
        poller.join()
    failed = [(i, rc, err.strip()) for i, (rc, _, err) in enumerate(results) if rc != 0]
    expect(not failed, f"keygens failed: {failed[:3]}")
    expect(not exposed, f"the poller saw key files with group/other bits: {exposed[:5]}")
    expect(seen[0] > 0, "the poller saw no file at all")
    modes = {name: oct(os.lstat(os.path.join(folder, name)).st_mode & 0o7777) for name in os.listdir(folder)}
    expect(len(modes) == 30, f"{len(modes)} files in the folder, want 30 keys and no leftovers: {sorted(modes)}")
    expect(all(m == "0o600" for m in modes.values()), f"final modes under umask 0: {modes}")
    print(f"      (poller: {seen[0]} observations, none with group/other bits)")


def check_keygen_no_replace(tmp):
    path = os.path.join(tmp, "2-existing.pem")
    ok("keygen", "--alg", "EdDSA", "--out", path)
    with open(path, "rb") as f:
        before = f.read()
    rc, _, err = tm("keygen", "--alg", "EdDSA", "--out", path)
    with open(path, "rb") as f:
        after = f.read()
    expect(rc != 0, "a second keygen to an existing file succeeded")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    expect(after == before, "the existing key file was changed")
    ok("keygen", "--alg", "EdDSA", "--out", path, "--force", umask=0)
    with open(path, "rb") as f:
        forced = f.read()
    expect(forced != before and forced.startswith(b"-----BEGIN PRIVATE KEY-----"), "--force did not replace the key")
    mode = os.lstat(path).st_mode
    expect(stat.S_ISREG(mode) and mode & 0o777 == 0o600, f"the replaced key has mode {oct(mode & 0o777)}")


# ---- 3: credential takeover ------------------------------------------------------------

def check_takeover_passkey(tmp):
    store = os.path.join(tmp, "3-auth", "state")
    victim, attacker = str(uuid.uuid4()), str(uuid.uuid4())
    ch = challenge()
    reg = cli_register(store, ch)
    rc, out, err = passkey(store, victim, reg, ch)
    expect(rc == 0 and out.strip() == reg["rawId"], f"the victim's passkey was refused ({rc}): {err.strip()}")
    # Control: the crafted form is accepted with the attacker's own credential ID.
    ch = challenge()
    rc, _, err = passkey(store, attacker, Authenticator().registration(ch), ch)
    expect(rc == 0, f"control: the attacker's own crafted registration was refused ({rc}): {err.strip()}")
    thief = Authenticator(cred_id=b64d(reg["rawId"]))
    ch = challenge()
    rc, _, err = passkey(store, attacker, thief.registration(ch), ch)
    expect(rc != 0, "a registration reusing the victim's credential ID (attacker key, account B) was accepted")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    # The victim's passkey still steps up the victim.
    step = ok("auth", "challenge", "--account", victim, store=store).strip()
    path = write_json(os.path.join(tmp, "3-assertion.json"), cli_assert(store, b64d(step), reg["rawId"]))
    rc, _, err = tm("auth", "elevate", "--account", victim, "--client-id", "app", "--assertion", path, store=store)
    expect(rc == 0, f"the victim's step-up failed after the refused takeover ({rc}): {err.strip()}")


def check_takeover_rp(tmp):
    store = os.path.join(tmp, "3-rp", "state")
    ch = challenge()
    reg = cli_register(store, ch)
    rc, _, err = rp_verify("registration", store, reg, ch)
    expect(rc == 0, f"the victim's registration was refused ({rc}): {err.strip()}")
    thief = Authenticator(cred_id=b64d(reg["rawId"]))
    ch = challenge()
    rc, _, err = rp_verify("registration", store, thief.registration(ch), ch)
    expect(rc != 0, "a registration reusing the victim's credential ID with the attacker's key was accepted")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    ch = challenge()
    rc, _, err = rp_verify("assertion", store, cli_assert(store, ch, reg["rawId"]), ch)
    expect(rc == 0, f"the victim's assertion failed after the refused takeover ({rc}): {err.strip()}")


# ---- 4: --out and special files -------------------------------------------------------------

def check_out_fifo(tmp):
    fifo = os.path.join(tmp, "4-fifo.svg")
    os.mkfifo(fifo, 0o600)
    got = {}

    def reader():
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    rc, _, err = tm("aztec", "encode", "hi", "--format", "svg", "--out", fifo, timeout=30)
    thread.join(10)
    expect(stat.S_ISFIFO(os.lstat(fifo).st_mode), f"the FIFO was replaced (mode {oct(os.lstat(fifo).st_mode)})")
    expect(rc == 0, f"aztec encode --out FIFO failed ({rc}): {err.strip()}")
    expect(b"<svg" in got.get("data", b""), f"the reader got {got.get('data', b'nothing')[:60]!r}, not the SVG")


def check_out_symlink(tmp):
    target, link = os.path.join(tmp, "4-target.txt"), os.path.join(tmp, "4-link.svg")
    with open(target, "wb") as f:
        f.write(b"original\n")
    os.symlink(target, link)
    rc, _, err = tm("aztec", "encode", "hi", "--format", "svg", "--out", link)
    expect(rc != 0, "--out through a symbolic link without --force was accepted")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    expect(os.path.islink(link) and os.readlink(link) == target, "the link was changed")
    with open(target, "rb") as f:
        expect(f.read() == b"original\n", "the link's target was written without --force")
    ok("aztec", "encode", "hi", "--format", "svg", "--out", link, "--force")
    expect(os.path.islink(link) and os.readlink(link) == target, "--force replaced the link itself")
    with open(target, "rb") as f:
        expect(b"<svg" in f.read(), "--force did not write the SVG to the link's target")


def private_null_device(tmp):
    """A character device 1,3 (a null device) made in the temporary folder,
    or None (with a note) where mknod or opening it is not permitted."""
    node = os.path.join(tmp, "4-null")
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        os.close(os.open(node, os.O_WRONLY))
    except OSError as e:
        print(f"SKIP  4 keygen --out CHARDEV --force: cannot make and open a private null device here ({e})")
        return None
    return node


def check_out_chardev(node):
    rdev = os.lstat(node).st_rdev
    rc, _, err = tm("keygen", "--alg", "EdDSA", "--out", node, "--force")
    info = os.lstat(node)
    expect(stat.S_ISCHR(info.st_mode) and info.st_rdev == rdev,
           f"the character device was replaced (mode {oct(info.st_mode)})")
    expect(rc == 0, f"keygen --out CHARDEV --force failed ({rc}): {err.strip()}")


# ---- 5: device state tampering ------------------------------------------------------------------

def tamper_setup(ctx, tmp):
    store = os.path.join(tmp, "5-device", "state")
    pay_device(store, limit=5)
    tokens = [ok("pay", "mint", "--offline", store=store).strip() for _ in range(2)]
    expect([offline_counter(t) for t in tokens] == [1, 2], f"offline counters {tokens}")
    ctx["store"] = store


def tampered_copy(ctx, tmp, name, edit):
    """A copy of the device folder with `edit(connection)` applied to its store."""
    expect("store" in ctx, "no device store (setup failed)")
    copy = os.path.join(tmp, f"5-{name}", "state")
    shutil.copytree(ctx["store"], copy)
    conn = sqlite3.connect(os.path.join(copy, "store.sqlite"))
    try:
        edit(conn)
        conn.commit()
    finally:
        conn.close()
    return copy


def expect_tampered(copy, what):
    rc, out, err = tm("pay", "mint", "--offline", store=copy)
    expect(rc != 0, f"{what}: pay mint --offline printed {out.strip()[:80]!r}")
    expect(refused_cleanly(rc, (1, 2, 3)), f"{what}: exit {rc}: {err.strip()}")
    expect("tamper" in err.lower(), f"{what}: the message does not say tampered: {err.strip()}")


def device_row(conn):
    row = conn.execute("SELECT value FROM items WHERE name = 'pay.device'").fetchone()
    expect(row is not None, "no pay.device row in items")
    return bytes(row[0])


def check_tamper_rename(ctx, tmp):
    tamper_setup(ctx, tmp)

    def edit(conn):
        device_row(conn)
        conn.execute("UPDATE items SET name = 'pay.device.old' WHERE name = 'pay.device'")
    expect_tampered(tampered_copy(ctx, tmp, "renamed", edit), "pay.device renamed")


def check_tamper_flip(ctx, tmp):
    def edit(conn):
        value = bytearray(device_row(conn))
        value[len(value) // 2] ^= 0x01
        conn.execute("UPDATE items SET value = ? WHERE name = 'pay.device'", (bytes(value),))
    expect_tampered(tampered_copy(ctx, tmp, "flipped", edit), "one bit of pay.device flipped")


def check_tamper_delete(ctx, tmp):
    def edit(conn):
        device_row(conn)
        conn.execute("DELETE FROM items WHERE name = 'pay.device'")
    expect_tampered(tampered_copy(ctx, tmp, "deleted", edit), "pay.device deleted")


def check_tamper_config(ctx, tmp):
    expect("store" in ctx, "no device store (setup failed)")
    edited = json.dumps({"debug": False, "environment": "production", "legacyTenant": False, "lifetime": 600,
                         "offlineLimit": 1000, "reference": str(uuid.uuid4()), "tenant": str(uuid.uuid4())}).encode()
    for label, sealed in (("plain", 0), ("sealed flag kept", 1)):
        def edit(conn, sealed=sealed):
            expect(conn.execute("SELECT 1 FROM items WHERE name = 'cli.config'").fetchone(), "no cli.config row")
            conn.execute("UPDATE items SET sealed = ?, value = ? WHERE name = 'cli.config'", (sealed, edited))
        expect_tampered(tampered_copy(ctx, tmp, f"config-{sealed}", edit),
                        f"cli.config replaced ({label}, offlineLimit 1000)")


def check_tamper_counters(ctx, tmp):
    expect("store" in ctx, "no device store (setup failed)")

    def zero(conn):
        conn.execute("UPDATE counters SET value = ?", (bytes(8),))
        # where the quota counters used to live
        for name in ("pay.offline.minted", "pay.offline.sequence"):
            conn.execute("INSERT OR REPLACE INTO counters (name, value) VALUES (?, ?)", (name, bytes(8)))

    def delete(conn):
        conn.execute("DELETE FROM counters")

    for label, edit in (("zeroed", zero), ("deleted", delete)):
        copy = tampered_copy(ctx, tmp, f"counters-{label}", edit)
        token = ok("pay", "mint", "--offline", store=copy).strip()
        expect(offline_counter(token) == 3,
               f"counters {label}: the next offline token is {token.split('/')[1]}, want counter 3")
        minted = pay_status(copy)["offlineMintedTokenCount"]
        expect(minted == 3, f"counters {label}: offlineMintedTokenCount {minted}, want 3")


def check_master_key_deleted(ctx, tmp):
    expect("store" in ctx, "no device store (setup failed)")
    copy = tampered_copy(ctx, tmp, "no-master-key", lambda conn: None)
    key = os.path.join(copy, "master.key")
    os.remove(key)
    rc, out, err = tm("pay", "status", store=copy)
    expect(rc != 0, f"pay status worked without the master key: {out.strip()[:80]!r}")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    expect(not os.path.exists(key), "a new master.key was created beside the existing store")


def check_master_key_mode(ctx, tmp):
    expect("store" in ctx, "no device store (setup failed)")
    copy = tampered_copy(ctx, tmp, "open-master-key", lambda conn: None)
    os.chmod(os.path.join(copy, "master.key"), 0o644)
    rc, out, err = tm("pay", "mint", "--offline", store=copy)
    expect(rc != 0, f"a master key readable by others was used: {out.strip()[:80]!r}")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    expect("group or others" in err, f"the message does not name group or others: {err.strip()}")


# ---- 6: lost output -------------------------------------------------------------------------------

def check_lost_token(tmp):
    store = os.path.join(tmp, "6-device", "state")
    pay_device(store)
    rc, _, err = to_full("pay", "mint", "--offline", store=store)
    expect(rc != 0, "pay mint --offline > /dev/full succeeded")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    status = pay_status(store)
    expect(status["wastedTokenCount"] == 1, f"wastedTokenCount {status['wastedTokenCount']}, want 1")
    minted = status["offlineMintedTokenCount"]
    rc, _, err = tm("pay", "mint", "--offline", "--aztec", "/nonexistent/x.png", store=store)
    expect(rc != 0, "pay mint --offline --aztec /nonexistent/x.png succeeded")
    expect(refused_cleanly(rc), f"exit {rc}: {err.strip()}")
    after = pay_status(store)["offlineMintedTokenCount"]
    expect(after == minted, f"an unwritable --aztec spent a token: offlineMintedTokenCount {minted} -> {after}")


def check_lost_answers(tmp):
    device = ForgedDevice()
    store = os.path.join(tmp, "6-verifier", "state")
    rc, _, err = to_full("pay", "verify", "--enrolment", device.enrolment, "--stdin", store=store,
                         stdin=(device.offline(1) + "\n").encode())
    expect(rc == 2, f"pay verify --stdin > /dev/full: exit {rc}, want 2: {err.strip()}")
    rc, _, err = to_full("aztec", "encode", "hi")
    expect(rc == 2, f"aztec encode hi > /dev/full: exit {rc}, want 2: {err.strip()}")
    key = os.path.join(tmp, "6-key.pem")
    ok("keygen", "--alg", "EdDSA", "--out", key)
    rc, _, err = to_full("jwt", "sign", "--key", key, "--sub", "alice", "--ttl", "60")
    expect(refused_cleanly(rc), f"jwt sign > /dev/full: exit {rc}: {err.strip()}")
    rc, _, err = to_full("keygen", "--alg", "EdDSA")
    expect(refused_cleanly(rc), f"keygen > /dev/full: exit {rc}: {err.strip()}")


# ---- 7: integer traps ---------------------------------------------------------------------------------

def check_jwt_traps(tmp):
    key = os.path.join(tmp, "7-key.pem")
    ok("keygen", "--alg", "EdDSA", "--out", key)
    results = {
        "--ttl Int64.max": tm("jwt", "sign", "--key", key, "--ttl", INT64_MAX)[0],
        "--now Int64.max-807 --ttl 1000":
            tm("jwt", "sign", "--key", key, "--now", "9223372036854775000", "--ttl", "1000")[0],
    }
    expect(all(refused_cleanly(rc) for rc in results.values()), f"exit codes (want 1 or 2): {results}")


def check_pay_traps(tmp):
    device = ForgedDevice()
    store = os.path.join(tmp, "7-verifier", "state")
    device_id = ok("pay", "verifier", "enrol", device.enrolment, store=store).strip()
    results = {
        "verify --lifetime Int64.max": pay_verify(store, device_id, device.offline(1), "--lifetime", INT64_MAX),
        "verify --now Int64.max": pay_verify(store, device_id, device.offline(2), f"--now={INT64_MAX}"),
        "verify --now Int64.min": pay_verify(store, device_id, device.offline(3), f"--now={INT64_MIN}"),
        "grant --window Int64.max":
            tm("pay", "verifier", "grant", "--device", device_id, "--window", INT64_MAX, store=store)[0],
    }
    expect(all(refused_cleanly(rc) for rc in results.values()), f"exit codes (want 1 or 2): {results}")


def check_jwt_exp_max(tmp):
    key = os.path.join(tmp, "7-exp-key.pem")
    ok("keygen", "--alg", "EdDSA", "--out", key)
    token = ok("jwt", "sign", "--key", key, "--claims", f'{{"exp":{INT64_MAX}}}').strip()
    rc, _, err = tm("jwt", "verify", "--key", key, "--leeway", "1", token)
    expect(rc == 0, f"exp = Int64.max with --leeway 1: exit {rc}, want 0: {err.strip()}")
    rc, _, err = tm("jwt", "verify", "--key", key, "--leeway", "601", token)
    expect(refused_cleanly(rc), f"--leeway 601: exit {rc}, want 1 or 2: {err.strip()}")


# ---- 8: single-use challenges at the CLI relying party ----------------------------------------------

def check_rp_challenge_once(tmp):
    store = os.path.join(tmp, "8-rp", "state")
    a = Authenticator()
    ch = challenge()
    rc, _, err = rp_verify("registration", store, a.registration(ch, sign_count=0), ch)
    expect(rc == 0, f"the registration with signCount 0 was refused ({rc}): {err.strip()}")
    ch = challenge()
    first = a.assertion(ch, 0)
    results = [rp_verify("assertion", store, first, ch)[0],        # accepted
               rp_verify("assertion", store, first, ch)[0],        # the same assertion again
               rp_verify("assertion", store, a.assertion(ch, 0), ch)[0],   # a fresh one, same challenge
               rp_verify("assertion", store, a.assertion(ch, 1), ch)[0]]
    expect(results == [0, 1, 1, 1],
           f"assertion / replay / fresh, count 0 / fresh, count 1: exit codes {results}, want [0, 1, 1, 1]")
    ch = challenge()
    rc, _, err = rp_verify("assertion", store, a.assertion(ch, 0), ch)
    expect(rc == 0, f"control: a new challenge with signCount 0 was refused ({rc}): {err.strip()}")


# ---- 9: long credential IDs ---------------------------------------------------------------------------

def check_long_credential_id(tmp):
    a = Authenticator(cred_id=os.urandom(1023))
    store = os.path.join(tmp, "9-rp", "state")
    ch = challenge()
    rc, out, err = rp_verify("registration", store, a.registration(ch), ch)
    expect(rc == 0, f"verify-registration refused a 1,023-byte credential ID ({rc}): {err.strip()}")
    expect(json.loads(out).get("credentialId") == b64u(a.cred_id), "the recorded credential ID differs")
    ch = challenge()
    rc, _, err = rp_verify("assertion", store, a.assertion(ch, 1), ch)
    expect(rc == 0, f"an assertion with the 1,023-byte credential ID was refused ({rc}): {err.strip()}")
    b = Authenticator(cred_id=os.urandom(1023))
    store = os.path.join(tmp, "9-auth", "state")
    ch = challenge()
    rc, out, err = passkey(store, str(uuid.uuid4()), b.registration(ch), ch)
    expect(rc == 0 and out.strip() == b64u(b.cred_id),
           f"auth passkey refused a 1,023-byte credential ID ({rc}): {err.strip()}")


# ---- 10: attacker text on the terminal ------------------------------------------------------------------

def expect_clean_stderr(result, what):
    rc, _, err = result
    raw = err.encode("utf-8", "surrogateescape")
    expect(rc != 0, f"{what} was accepted")
    expect(raw.strip(), f"{what}: refused without a message")
    body = raw.rstrip(b"\n")
    bad = sorted({b for b in body if b < 0x20 or b in (0x7F, 0x9B)})
    expect(not bad, f"{what}: raw control bytes {[hex(b) for b in bad]} on stderr: {raw[:200]!r}")
    # The text is shown, escaped, not dropped: ESC appears as an escape.
    expect("u{1b}" in err, f"{what}: the attacker's text is not shown escaped: {err.strip()[:200]!r}")


def check_escaped_kid(tmp):
    key = ed25519.Ed25519PrivateKey.generate()
    header = {"alg": "EdDSA", "kid": "\x1b[31mX\nY\x00", "typ": "JWT"}
    claims = {"sub": "alice", "exp": int(time.time()) + 300}
    signing = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    token = signing + "." + b64u(key.sign(signing.encode()))
    other = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    jwks = write_json(os.path.join(tmp, "10-jwks.json"),
                      {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64u(other), "kid": "other", "alg": "EdDSA"}]})
    expect_clean_stderr(tm("jwt", "verify", "--jwks", jwks, token), "a JWT whose kid holds control characters")


def check_escaped_push(tmp):
    store = os.path.join(tmp, "10-device", "state")
    ok("pay", "init", "--tenant", str(uuid.uuid4()), "--reference", str(uuid.uuid4()), store=store)
    payload = json.dumps({"aps": {}, "yp-type": "\x1b]0;t\x07\nZ"})
    expect_clean_stderr(tm("pay", "push", payload, store=store), "a push whose yp-type holds control characters")


def check_escaped_origin(tmp):
    store = os.path.join(tmp, "10-rp", "state")
    evil = ORIGIN + "\x1b[2J\x1b]0;pwned\x07\n\x9b31m\x7f"
    a = Authenticator()
    ch = challenge()
    expect_clean_stderr(rp_verify("registration", store, a.registration(ch, origin=evil), ch),
                        "a registration whose origin holds control characters")
    ch = challenge()
    rc, _, err = rp_verify("registration", store, a.registration(ch), ch)
    expect(rc == 0, f"the registration with the right origin was refused ({rc}): {err.strip()}")
    ch = challenge()
    expect_clean_stderr(rp_verify("assertion", store, a.assertion(ch, 1, origin=evil), ch),
                        "an assertion whose origin holds control characters")


# ---- 11: strict inputs ---------------------------------------------------------------------------------

def pem(label, der):
    body = base64.b64encode(der).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]) + "\n"


def check_strict_pem(tmp):
    key = ed25519.Ed25519PrivateKey.generate()
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    files = {}
    for name, text in (("good", pem("PRIVATE KEY", der)),
                       ("trailing", pem("PRIVATE KEY", der + b"\x05\x00\x00")),
                       ("two-blocks", pem("PRIVATE KEY", der) + pem("PRIVATE KEY", ed25519.Ed25519PrivateKey.generate()
                                                                   .private_bytes(serialization.Encoding.DER,
                                                                                  serialization.PrivateFormat.PKCS8,
                                                                                  serialization.NoEncryption())))):
        files[name] = os.path.join(tmp, f"11-{name}.pem")
        with open(files[name], "w") as f:
            f.write(text)
    rc, _, err = tm("pubkey", files["good"])
    expect(rc == 0, f"control: pubkey of a plain PEM failed ({rc}): {err.strip()}")
    results = {name: tm("pubkey", files[name])[0] for name in ("trailing", "two-blocks")}
    expect(all(rc != 0 for rc in results.values()), f"pubkey exit codes (want non-zero): {results}")
    expect(all(refused_cleanly(rc) for rc in results.values()), f"pubkey exit codes (want 1 or 2): {results}")


def check_raw_id(tmp):
    a = Authenticator()
    ch = challenge()
    reg = a.registration(ch, raw_id=os.urandom(32))
    rc, _, err = rp_verify("registration", os.path.join(tmp, "11-rp", "state"), reg, ch)
    expect(rc == 1, f"verify-registration with a rawId that is not the credential ID: exit {rc}, want 1: {err.strip()}")
    ch = challenge()
    reg = a.registration(ch, raw_id=os.urandom(32))
    rc, _, err = passkey(os.path.join(tmp, "11-auth", "state"), str(uuid.uuid4()), reg, ch)
    expect(rc == 1, f"auth passkey with a rawId that is not the credential ID: exit {rc}, want 1: {err.strip()}")


def check_token_binding(tmp):
    rp_store, auth_store = os.path.join(tmp, "11-tb-rp", "state"), os.path.join(tmp, "11-tb-auth", "state")
    present = {"status": "present", "id": "AAA"}
    ch = challenge()
    rc, _, err = rp_verify("registration", rp_store, Authenticator().registration(ch, tokenBinding=present), ch)
    expect(rc == 1, f"verify-registration with tokenBinding present: exit {rc}, want 1: {err.strip()}")
    ch = challenge()
    rc, _, err = passkey(auth_store, str(uuid.uuid4()), Authenticator().registration(ch, tokenBinding=present), ch)
    expect(rc == 1, f"auth passkey with tokenBinding present: exit {rc}, want 1: {err.strip()}")
    ch = challenge()
    reg = Authenticator().registration(ch, tokenBinding={"status": "supported"})
    rc, _, err = rp_verify("registration", rp_store, reg, ch)
    expect(rc == 0, f"control: tokenBinding supported was refused ({rc}): {err.strip()}")


# ---- driver ----------------------------------------------------------------------------------------------

def main():
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        checks.fail(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        return checks.summary()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tokenmint-attack-") as tmp:
        print("# 1 offline grants, spent slots, issued online parts (a compromised device)")
        ctx = {}
        checks.group("1 --require-grant: counters 01, 001, +1, -1, 0 refused", check_noncanonical_counters, ctx, tmp)
        checks.group("1 --require-grant: counter 1 with six nonces accepted once", check_counter_once, ctx)
        checks.group("1 --require-grant: on.M1.5 (never issued), OFF., Off., off refused", check_labels, ctx)
        checks.group("1 --require-grant: counter 2 once, counter 3 (never granted) refused, at most 2 offline tokens",
                     check_grant_bound, ctx)
        checks.group("1 --require-grant: an issued part is good for one token, a part never issued for none",
                     check_online_parts, ctx)
        checks.group("1 no --require-grant: counter 1 with two nonces accepted once",
                     check_counter_once_without_grants, tmp)

        print("# 2 secret files")
        checks.group("2 keygen --out: never group/other bits, 0600 under umask 0 (30 keygens, EdDSA/ES256, PEM/JWK)",
                     check_keygen_modes, tmp)
        checks.group("2 keygen --out: an existing file is kept, --force replaces it", check_keygen_no_replace, tmp)

        print("# 3 credential takeover")
        checks.group("3 auth passkey: the victim's credential ID with the attacker's key for account B refused",
                     check_takeover_passkey, tmp)
        checks.group("3 fido2 verify-registration: the victim's credential ID with the attacker's key refused",
                     check_takeover_rp, tmp)

        print("# 4 --out and special files")
        checks.group("4 aztec encode --out FIFO: the SVG goes through, the FIFO stays", check_out_fifo, tmp)
        checks.group("4 aztec encode --out SYMLINK: refused; --force writes the target, keeps the link",
                     check_out_symlink, tmp)
        node = private_null_device(tmp)
        if node:
            checks.group("4 keygen --out CHARDEV --force: the character device stays one", check_out_chardev, node)

        print("# 5 device state tampering")
        ctx = {}
        checks.group("5a pay.device renamed: refused as tampered", check_tamper_rename, ctx, tmp)
        checks.group("5b one bit of pay.device flipped: refused as tampered", check_tamper_flip, ctx, tmp)
        checks.group("5c pay.device deleted: refused as tampered", check_tamper_delete, ctx, tmp)
        checks.group("5d cli.config replaced by a plain or edited value: refused as tampered",
                     check_tamper_config, ctx, tmp)
        checks.group("5e counters zeroed or deleted: the next offline counter is still 3",
                     check_tamper_counters, ctx, tmp)
        checks.group("5f master.key deleted: refused, no new key made", check_master_key_deleted, ctx, tmp)
        checks.group("5g master.key mode 0644: refused, naming group or others", check_master_key_mode, ctx, tmp)

        print("# 6 lost output")
        checks.group("6 pay mint --offline > /dev/full is wasted; an unwritable --aztec spends nothing",
                     check_lost_token, tmp)
        checks.group("6 pay verify --stdin, aztec encode, jwt sign, keygen > /dev/full fail with an exit status",
                     check_lost_answers, tmp)

        print("# 7 integer traps")
        checks.group("7 jwt sign --ttl Int64.max, --now near Int64.max: exit 1 or 2", check_jwt_traps, tmp)
        checks.group("7 pay verify --lifetime/--now at the Int64 ends, grant --window Int64.max: exit 1 or 2",
                     check_pay_traps, tmp)
        checks.group("7 exp = Int64.max verifies with --leeway 1; --leeway 601 refused", check_jwt_exp_max, tmp)

        print("# 8 CLI relying party")
        checks.group("8 verify-assertion: a challenge is good once, also with signCount 0",
                     check_rp_challenge_once, tmp)

        print("# 9 long credential IDs")
        checks.group("9 a 1,023-byte credential ID: verify-registration, verify-assertion, auth passkey",
                     check_long_credential_id, tmp)

        print("# 10 attacker text on the terminal")
        checks.group("10 jwt verify: a kid with ESC, newline and NUL is escaped", check_escaped_kid, tmp)
        checks.group("10 pay push: a yp-type with OSC, BEL and newline is escaped", check_escaped_push, tmp)
        checks.group("10 fido2 verify-registration/assertion: an origin with ESC, CSI and DEL is escaped",
                     check_escaped_origin, tmp)

        print("# 11 strict inputs")
        checks.group("11 pubkey: bytes after the DER key, a second PEM block refused", check_strict_pem, tmp)
        checks.group("11 a rawId that is not the credential ID refused (verify-registration, auth passkey)",
                     check_raw_id, tmp)
        checks.group("11 clientDataJSON tokenBinding present refused (verify-registration, auth passkey)",
                     check_token_binding, tmp)
    print(f"      ({time.monotonic() - started:.0f} s)")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
