#!/usr/bin/env python3
"""Full-disk and read-only harness for every durable store of the CLI.

Three stores get set up — WhitelabelPay offline minting, a FIDO2
authenticator, a token issuer — each on its own small file system: a tmpfs
mounted for the purpose when this runs as root and may mount, otherwise a
per-process file-size limit (RLIMIT_FSIZE) stands in for the full disk and a
user without write permission for the read-only mount.

Full disk: the file system is filled to the last byte, then space is handed
back 2 KiB at a time; at each step the store-writing operation runs once
(pay mint --offline, fido2 assert, auth refresh). Each run must either succeed
with a well-formed result or exit with a typed error naming the store's
condition; never a signal, a trap or a half-written result.

Read-only: the same operations on the read-only store must fail with a typed
error; the reading ones (pay status, auth verify, auth jwks) keep working.

Afterwards, with space and write access back: every SQLite file passes
`PRAGMA integrity_check`, the operations work again, offline sequence numbers
and signCounts rose strictly across every printed result (none reused), a
refresh token refused for lack of space is still the live one (nothing was
spent), and every spent refresh token is refused.

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint). Ends with
`N passed, M failed` (exit 1 if anything failed).
"""
import contextlib
import glob
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tmcli import Checks, b64d, b64u, command  # noqa: E402
from pay_verify import parse_enrolment, verify_payment  # noqa: E402

RP, ORIGIN = "tokenmint.test", "https://tokenmint.test"
ACCOUNT = "6f1c2a8e-3b7d-4e5f-9a0b-1c2d3e4f5a6b"
PUSH = '{"aps":{},"yp-type":"enrolment-succeeded.v1"}'
STEP = 2048
STEPS = 40
FS_BYTES = 4 << 20
TYPED = ("disk full", "read-only", "readonly", "I/O error", "store.")
NOBODY = 65534

checks = Checks()


class Volume:
    """A small file system for one store: a tmpfs, or a plain folder plus
    RLIMIT_FSIZE and a non-root user when mounting is not possible."""

    def __init__(self, root):
        self.path = tempfile.mkdtemp(dir=root)
        self.mounted = os.geteuid() == 0 and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES},mode=0777", "tmpfs", self.path],
            capture_output=True).returncode == 0
        self.filler = os.path.join(self.path, "filler")
        self.size_limit = None      # RLIMIT_FSIZE for the fallback
        self.read_only = False

    @property
    def kind(self):
        return "tmpfs" if self.mounted else "RLIMIT_FSIZE + unprivileged user"

    def fill(self):
        """Fills the file system (or sets the size limit at the store's size)."""
        if self.mounted:
            fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                for chunk in (65536, 512):
                    with contextlib.suppress(OSError):
                        while True:
                            os.write(fd, b"\0" * chunk)
            finally:
                os.close(fd)
        else:
            self.size_limit = max(os.path.getsize(p) for p in self.files())

    def give_back(self, nbytes):
        if self.mounted:
            size = os.path.getsize(self.filler)
            os.truncate(self.filler, max(0, size - nbytes))
        else:
            self.size_limit += nbytes

    def unfill(self):
        if self.mounted:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.filler)
        self.size_limit = None

    def set_read_only(self, on):
        self.read_only = on
        if self.mounted:
            subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", self.path], check=True)
        elif os.geteuid() != 0:
            for p in [self.path, *glob.glob(os.path.join(self.path, "**"), recursive=True)]:
                mode = os.stat(p).st_mode
                os.chmod(p, (mode & ~0o222) if on else (mode | 0o200))

    def files(self):
        return [p for p in glob.glob(os.path.join(self.path, "**"), recursive=True)
                if os.path.isfile(p) and p != self.filler]

    def databases(self):
        out = []
        for p in self.files():
            with open(p, "rb") as f:
                if f.read(16) == b"SQLite format 3\0":
                    out.append(p)
        return out

    def preexec(self):
        limit = self.size_limit
        drop = self.read_only and not self.mounted and os.geteuid() == 0

        def setup():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            if drop:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
        return setup

    def close(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.path])
        shutil.rmtree(self.path, ignore_errors=True)


def run(volume, *args):
    store = os.path.join(volume.path, "store")
    proc = subprocess.run(command(store, list(args)), capture_output=True, text=True,
                          preexec_fn=volume.preexec(), timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def ok(volume, *args):
    rc, out, err = run(volume, *args)
    if rc != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed ({rc}): {err.strip()}")
    return out


def typed_failure(rc, err):
    """A clean, typed refusal: an exit status, not a signal; a message, not a trap."""
    return rc > 0 and "Fatal error" not in err and "Sanitizer" not in err and any(w in err for w in TYPED)


def integrity(volume, label):
    bad = []
    for db in volume.databases():
        with contextlib.closing(sqlite3.connect(db)) as conn:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if result != "ok":
            bad.append((os.path.basename(db), result))
    checks(f"{label}: every SQLite file passes integrity_check ({len(volume.databases())} files)",
           not bad and volume.databases(), bad)


def sweep(volume, label, operation, accept):
    """Fills the volume, then gives space back step by step, running the
    operation at each step. Returns the per-step outcomes."""
    volume.fill()
    outcomes, untyped = [], []
    for step in range(STEPS + 1):
        rc, out, err = run(volume, *operation())
        if rc == 0:
            accept(out)
            outcomes.append("ok")
        elif typed_failure(rc, err):
            outcomes.append("refused")
        else:
            outcomes.append("BAD")
            untyped.append((step, rc, err.strip()[-200:]))
        volume.give_back(STEP)
    volume.unfill()
    refused, succeeded = outcomes.count("refused"), outcomes.count("ok")
    first_ok = outcomes.index("ok") if "ok" in outcomes else None
    print(f"     {label}: {refused} refused as full, {succeeded} succeeded, first success after "
          f"{first_ok * STEP if first_ok is not None else '-'} bytes freed")
    checks(f"{label}: a full disk gives a typed error, never a trap or a signal", not untyped, untyped[:3])
    checks(f"{label}: the full disk was hit at least once", refused > 0)
    return outcomes


def read_only(volume, label, writes, reads):
    volume.set_read_only(True)
    try:
        bad = []
        for args in writes:
            rc, out, err = run(volume, *args)
            if not typed_failure(rc, err):
                bad.append((args[:2], rc, err.strip()[-200:]))
        checks(f"{label}: writes to a read-only store fail with a typed error", not bad, bad)
        bad = []
        for args in reads:
            rc, out, err = run(volume, *args)
            if rc != 0:
                bad.append((args[:2], rc, err.strip()[-200:]))
        checks(f"{label}: reads of a read-only store still work", not bad, bad)
    finally:
        volume.set_read_only(False)


def pay(volume):
    ok(volume, "pay", "init", "--tenant", str(uuid.uuid4()), "--reference", str(uuid.uuid4()), "--offline-limit", "1000")
    ok(volume, "pay", "means", "add", "means-1")
    enrolment = parse_enrolment(ok(volume, "pay", "enrol").strip())
    ok(volume, "pay", "push", PUSH)
    sequences = []

    def accept(out):
        token = verify_payment(out.strip().splitlines()[-1], enrolment["public_key"])
        sequences.append(token["offline"][1])

    accept(ok(volume, "pay", "mint", "--offline"))
    sweep(volume, "pay mint --offline", lambda: ["pay", "mint", "--offline"], accept)
    read_only(volume, "pay", [["pay", "mint", "--offline"]], [["pay", "status"]])
    integrity(volume, "pay")
    accept(ok(volume, "pay", "mint", "--offline"))
    checks("pay: offline sequence numbers rise strictly across every printed token (none reused)",
           all(b > a for a, b in zip(sequences, sequences[1:])), sequences)
    status = json.loads(ok(volume, "pay", "status"))
    checks("pay: the store counts at least every printed offline token",
           status.get("offlineMintedTokenCount", 0) >= len(sequences), status)


def fido2(volume):
    out = ok(volume, "fido2", "register", "--rp", RP, "--origin", ORIGIN, f"--challenge={b64u(os.urandom(32))}",
             "--user-id", "0102", "--user-name", "alice")
    credential = json.loads(out)["rawId"]
    counts = []

    def assertion():
        return ["fido2", "assert", "--rp", RP, "--origin", ORIGIN, f"--challenge={b64u(os.urandom(32))}",
                f"--credential={credential}"]

    def accept(out):
        data = b64d(json.loads(out)["response"]["authenticatorData"])
        counts.append(int.from_bytes(data[33:37], "big"))

    accept(ok(volume, *assertion()))
    sweep(volume, "fido2 assert", assertion, accept)
    read_only(volume, "fido2", [assertion()], [])
    integrity(volume, "fido2")
    accept(ok(volume, *assertion()))
    checks("fido2: signCounts rise strictly across every printed assertion (none reused or decreased)",
           all(b > a for a, b in zip(counts, counts[1:])), counts)


def auth(volume):
    pair = json.loads(ok(volume, "auth", "issue", "--account", ACCOUNT, "--client-id", "app"))
    state = {"current": pair["refresh_token"], "access": pair["access_token"]}
    spent = []

    def accept(out):
        new = json.loads(out)
        spent.append(state["current"])
        state["current"], state["access"] = new["refresh_token"], new["access_token"]

    sweep(volume, "auth refresh", lambda: ["auth", "refresh", "--", state["current"]], accept)
    read_only(volume, "auth", [["auth", "refresh", "--", state["current"]],
                               ["auth", "issue", "--account", ACCOUNT, "--client-id", "app"]],
              [["auth", "verify", state["access"]], ["auth", "jwks"]])
    integrity(volume, "auth")
    rc, out, err = run(volume, "auth", "refresh", "--", state["current"])
    checks("auth: the live refresh token survived every refused rotation and rotates now", rc == 0, err.strip())
    if rc == 0:
        accept(out)
    refused = [run(volume, "auth", "refresh", "--", t)[0] != 0 for t in spent[-10:]]
    checks(f"auth: spent refresh tokens are refused ({len(refused)} tried)", refused and all(refused))


def main():
    with tempfile.TemporaryDirectory() as root:
        os.chmod(root, 0o755)
        for name, flow in (("pay", pay), ("fido2", fido2), ("auth", auth)):
            volume = Volume(root)
            try:
                print(f"== {name} on {volume.kind}")
                flow(volume)
            except Exception as e:  # a broken harness step is a failure, not a crash of the run
                checks.fail(f"{name}: {type(e).__name__}: {e}")
            finally:
                volume.close()
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
