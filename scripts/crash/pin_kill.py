#!/usr/bin/env python3
"""SIGKILL harness for the durable PIN retries of `tokenmint fido2 device`.

The authenticator keeps the PIN hash and the retries counter in its --state
store, and spends a retry (committed) before it compares a PIN: killing the
process can waste a retry, never give one back. Shown here through
python-fido2 2.x (its CtapHidDevice over the device's UNIX socket of raw
64-byte CTAPHID reports, as in scripts/interop/ctap_device.py, and its
ClientPin):

`fido2 device --socket S --state D --no-builtin-uv` starts in a temporary
folder and python-fido2 sets a PIN (setPIN); retries must be 8. Then N times:
getKeyAgreement is done first (so that the clock starts at the PIN command
itself), a thread sends a wrong PIN (python-fido2's get_pin_token, at random
getPinToken 0x05 or getPinUvAuthTokenUsingPinWithPermissions 0x09) and the
device gets SIGKILL after a random delay in [0, W] ms (W = --max-delay-ms,
default 3: before the command is read, between the commit and the answer,
after the answer); it is started again on the same --state (a power cycle)
and getPINRetries read again. Invariants, kill by kill:
  - retries after <= retries before (never one given back);
  - if the device answered the wrong PIN (PIN_INVALID, PIN_AUTH_BLOCKED or
    PIN_BLOCKED reached the client: the device sent it before it died),
    retries after <= before - 1 (the retry was committed before the answer);
  - retries after >= before - 1 (one PIN try costs at most one retry);
  - an answer to a wrong PIN is one of those three codes, never a token;
  - powerCycleState is false after every restart.
When retries are 2 or less the right PIN is used once (not killed): retries
must be 8 again. They never reach 0 during the kills.

Afterwards: the PIN hash survived every kill (the right PIN gives a token, a
makeCredential with it has UV set, retries 8); then wrong PINs (a power cycle
after each PIN_AUTH_BLOCKED) take retries to 0 in exactly 8 tries, the last
one answered PIN_BLOCKED; the right PIN gets PIN_BLOCKED, also after a
restart (retries still 0); the last SIGTERM exits 0.

Figures: kills, answers the device sent before it died (and how many the
client had read before the SIGKILL went out), kills before the retry was
committed (retries unchanged), retries wasted by kills (committed, no
answer), right-PIN recoveries, median PIN command time and the run time.
The CLI is taken from $TOKENMINT (default .build/debug/tokenmint). Ends with
`N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import logging
import os
import queue
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from ctaphid_socket import open_device  # noqa: E402
from tmcli import TOKENMINT, Checks, Fail, expect  # noqa: E402

from fido2.ctap import CtapError  # noqa: E402
from fido2.ctap2 import ClientPin, Ctap2, PinProtocolV2  # noqa: E402
from fido2.webauthn import AuthenticatorData  # noqa: E402

check = Checks()
logging.getLogger("fido2.hid").setLevel(logging.ERROR)

PIN, WRONG_PIN = "4711", "not-the-pin"
ERR = CtapError.ERR
WRONG_PIN_ANSWERS = (ERR.PIN_INVALID, ERR.PIN_AUTH_BLOCKED, ERR.PIN_BLOCKED)
PERM = ClientPin.PERMISSION
RP_ID = "pin-kill.example"


def err_name(code):
    try:
        return ERR(code).name
    except ValueError:
        return f"0x{int(code):02X}"


# python-fido2's get_pin_token runs getKeyAgreement and then the PIN command;
# the harness does the key agreement before the clock starts, so that the kill
# delay counts from the PIN command alone.
if not callable(getattr(ClientPin, "_get_shared_secret", None)):
    raise SystemExit("python-fido2's ClientPin has no _get_shared_secret: this harness needs updating")


class PresetClientPin(ClientPin):
    """python-fido2's ClientPin with the key agreement done beforehand."""

    def __init__(self, ctap, protocol, shared):
        super().__init__(ctap, protocol)
        self._shared = shared

    def _get_shared_secret(self):
        return self._shared


# ---- the device process -------------------------------------------------------------

class Device:
    """`tokenmint fido2 device --no-builtin-uv` on one --state, with one host connected."""

    def __init__(self, root):
        self.socket_path = os.path.join(root, "ctap.sock")
        self.state = os.path.join(root, "state")
        self.log_path = os.path.join(root, "device.log")
        self.proc = self.dev = self.ctap = None
        self.starts = 0

    def stderr_tail(self):
        try:
            with open(self.log_path) as f:
                return f.read()[-600:].strip()
        except OSError:
            return ""

    def start(self):
        """Starts it, waits for "listening on S", connects python-fido2 (CTAPHID INIT, getInfo)."""
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [TOKENMINT, "fido2", "device", "--socket", self.socket_path, "--state", self.state, "--no-builtin-uv"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True)
        lines = queue.Queue()

        def drain(stream):
            for line in stream:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=drain, args=(self.proc.stdout,), daemon=True).start()
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            line = None
        if line != f"listening on {self.socket_path}":
            self.kill()
            raise Fail(f"start {self.starts + 1}: first stdout line {line!r}; stderr: {self.stderr_tail()}")
        self.starts += 1
        self.dev = open_device(self.socket_path)
        self.ctap = Ctap2(self.dev)

    def client_pin(self):
        return ClientPin(self.ctap, PinProtocolV2())

    def retries(self):
        """(pinRetries, powerCycleState)"""
        return self.client_pin().get_pin_retries()

    def kill(self):
        """SIGKILL now (no poll first: the signal goes out at once), then reap it."""
        if self.proc is not None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None

    def disconnect(self):
        if self.dev is not None:
            try:
                self.dev.close()
            except Exception:
                pass
        self.dev = self.ctap = None

    def power_cycle(self):
        """SIGKILL, then the same --state again."""
        self.kill()
        self.disconnect()
        self.start()

    def stop(self):
        """SIGTERM; the exit code (None if it did not exit within 15 s: then killed)."""
        self.disconnect()
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self.proc = None


# ---- one killed wrong-PIN try ---------------------------------------------------------

def killed_wrong_pin(device, delay, permissions):
    """Sends a wrong PIN from a thread, SIGKILLs the device `delay` seconds
    after the command went out. Returns (outcome, read_before_kill, elapsed):
    outcome is ("answer", code), ("token", None) or ("lost", reason)."""
    pin = device.client_pin()
    shared = pin._get_shared_secret()  # getKeyAgreement, before the clock starts
    preset = PresetClientPin(device.ctap, pin.protocol, shared)
    result = {}
    sending, done = threading.Event(), threading.Event()

    def send():
        sending.set()
        start = time.monotonic()
        try:
            preset.get_pin_token(WRONG_PIN, permissions)
            result["outcome"] = ("token", None)
        except CtapError as e:
            result["outcome"] = ("answer", e.code)
        except Exception as e:  # the connection died with the device
            result["outcome"] = ("lost", f"{type(e).__name__}: {e}")
        result["elapsed"] = time.monotonic() - start
        done.set()

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    sending.wait()
    if delay > 0:
        time.sleep(delay)
    read_before_kill = done.is_set()
    device.kill()
    thread.join(15)
    if thread.is_alive():
        raise Fail("the host thread hung after the device was killed")
    return result["outcome"], read_before_kill, result["elapsed"]


def timed_wrong_pin(device):
    """An unkilled wrong PIN, timed from the PIN command (for the figures); returns seconds."""
    pin = device.client_pin()
    preset = PresetClientPin(device.ctap, pin.protocol, pin._get_shared_secret())
    start = time.monotonic()
    try:
        preset.get_pin_token(WRONG_PIN)
    except CtapError as e:
        expect(e.code == ERR.PIN_INVALID, f"an unkilled wrong PIN: {err_name(e.code)}")
    else:
        raise Fail("an unkilled wrong PIN gave a token")
    return time.monotonic() - start


def right_pin(device, what):
    """The right PIN (not killed): a token, retries 8 after it."""
    try:
        device.client_pin().get_pin_token(PIN)
    except CtapError as e:
        raise Fail(f"{what}: the right PIN got {err_name(e.code)}")
    retries, _ = device.retries()
    expect(retries == 8, f"{what}: retries {retries} after the right PIN, expected 8")


# ---- the run --------------------------------------------------------------------------

def kill_loop(device, kills, window, rng):
    violations = {"rise": [], "answered": [], "one": [], "answers": [], "power": [], "zero": []}
    figures = {"answers": 0, "read_first": 0, "before_commit": 0, "wasted": 0, "recoveries": 0,
               "codes": {}, "lost": {}}
    before, _ = device.retries()
    for i in range(1, kills + 1):
        if before <= 2:
            right_pin(device, f"kill {i}: recovery")
            figures["recoveries"] += 1
            before = 8
        permissions = rng.choice((None, PERM.MAKE_CREDENTIAL | PERM.GET_ASSERTION))  # 0x05 or 0x09
        (kind, detail), read_first, _ = killed_wrong_pin(device, rng.uniform(0, window), permissions)
        device.disconnect()
        device.start()
        after, power = device.retries()
        tag = f"kill {i}: {before} -> {after}"
        if after > before:
            violations["rise"].append(f"{tag} ({kind} {detail})")
        if after < before - 1:
            violations["one"].append(tag)
        if power:
            violations["power"].append(f"{tag}: powerCycleState {power!r}")
        if after == 0:
            violations["zero"].append(tag)
        if kind == "token":
            violations["answers"].append(f"kill {i}: the wrong PIN gave a token")
        elif kind == "answer":
            figures["codes"][err_name(detail)] = figures["codes"].get(err_name(detail), 0) + 1
            if detail not in WRONG_PIN_ANSWERS:
                violations["answers"].append(f"kill {i}: the wrong PIN answered {err_name(detail)}")
            else:
                figures["answers"] += 1
                figures["read_first"] += read_first
                if after > before - 1:
                    violations["answered"].append(f"{tag} after {err_name(detail)} reached the client")
        else:
            reason = detail.split(":")[0]
            figures["lost"][reason] = figures["lost"].get(reason, 0) + 1
            if after == before:
                figures["before_commit"] += 1
            elif after == before - 1:
                figures["wasted"] += 1
        before = after
    return violations, figures


def final_checks(device):
    # The PIN hash survived every kill: a token for it, and a makeCredential
    # with that token is user-verified.
    pin = device.client_pin()
    try:
        token = pin.get_pin_token(PIN, PERM.MAKE_CREDENTIAL, RP_ID)
    except CtapError as e:
        token, problem = None, err_name(e.code)
    else:
        problem = None
    ok = token is not None
    if ok:
        cdh = os.urandom(32)
        resp = device.ctap.make_credential(
            cdh, {"id": RP_ID, "name": RP_ID}, {"id": b"\x01", "name": "pin"}, [{"type": "public-key", "alg": -7}],
            pin_uv_param=pin.protocol.authenticate(token, cdh), pin_uv_protocol=pin.protocol.VERSION)
        uv = bool(resp.auth_data.flags & AuthenticatorData.FLAG.UV)
        retries, _ = device.retries()
        ok = uv and retries == 8
        problem = f"UV {uv}, retries {retries}"
    check("the PIN hash survived the kills: the right PIN gives a token, makeCredential with it has UV, retries 8",
          ok, problem or "")

    # Blocking at the end: 8 wrong PINs (a power cycle after each
    # PIN_AUTH_BLOCKED), the 8th answered PIN_BLOCKED.
    codes, seen = [], []
    while len(codes) < 12:
        try:
            device.client_pin().get_pin_token(WRONG_PIN)
            code = None
        except CtapError as e:
            code = e.code
        codes.append(code)
        seen.append(err_name(code) if code is not None else "token")
        if code == ERR.PIN_AUTH_BLOCKED:
            device.power_cycle()
        elif code != ERR.PIN_INVALID:
            break
    retries, _ = device.retries()
    check("8 wrong PINs block the PIN (the 8th answered PIN_BLOCKED), retries 0",
          len(codes) == 8 and codes[-1] == ERR.PIN_BLOCKED and retries == 0, f"answers {seen}, retries {retries}")

    def right_pin_code():
        try:
            device.client_pin().get_pin_token(PIN)
        except CtapError as e:
            return e.code
        return None

    code = right_pin_code()
    check("blocked: the right PIN gets PIN_BLOCKED", code == ERR.PIN_BLOCKED,
          err_name(code) if code is not None else "a token")
    device.power_cycle()
    retries, _ = device.retries()
    code = right_pin_code()
    check("blocked after a restart (SIGKILL, same --state): retries 0, the right PIN gets PIN_BLOCKED",
          retries == 0 and code == ERR.PIN_BLOCKED,
          f"retries {retries}, {err_name(code) if code is not None else 'a token'}")
    code = device.stop()
    check("the last SIGTERM: exit 0", code == 0, f"exit {code}; stderr: {device.stderr_tail()}")


def run(root, kills, window, rng):
    started = time.monotonic()
    device = Device(root)
    try:
        device.start()
        device.client_pin().set_pin(PIN)
        retries, _ = device.retries()
        check("setPIN through python-fido2; retries 8", retries == 8, f"retries {retries}")

        # The PIN command's own time, unkilled (the kill window is set against it).
        # A right PIN after each, so that none is the third wrong one in a row.
        times = []
        for _ in range(5):
            times.append(timed_wrong_pin(device))
            right_pin(device, "after a timing try")
        device.power_cycle()

        violations, f = kill_loop(device, kills, window, rng)
        elapsed = time.monotonic() - started
        print(f"     P: {kills} kills in {elapsed:.1f} s, delays uniform in [0, {window * 1000:.1f}] ms from the PIN "
              f"command (unkilled it takes {statistics.median(times) * 1000:.1f} ms, median of {len(times)})")
        print(f"     P: {f['answers']} wrong-PIN answers sent before the kill "
              f"({f['read_first']} read by the client before the SIGKILL went out; "
              f"{', '.join(f'{k} {v}' for k, v in sorted(f['codes'].items())) or 'none'})")
        print(f"     P: {kills - f['answers']} kills with no answer: {f['before_commit']} before the retry was committed "
              f"(retries unchanged), {f['wasted']} retries wasted (committed, no answer), {len(violations['rise'])} given back")
        print(f"     P: {f['recoveries']} right-PIN recoveries to 8, {device.starts} device starts; "
              f"the host saw: {', '.join(f'{k} {v}' for k, v in sorted(f['lost'].items())) or 'nothing lost'}")
        check(f"retries never rose across a kill and restart ({kills} kills)", not violations["rise"],
              violations["rise"][:5])
        check(f"every answered wrong PIN had cost its retry ({f['answers']} answers)", not violations["answered"],
              violations["answered"][:5])
        check("a killed PIN try costs at most one retry", not violations["one"], violations["one"][:5])
        check("a wrong PIN is answered PIN_INVALID / PIN_AUTH_BLOCKED / PIN_BLOCKED, never a token",
              not violations["answers"], violations["answers"][:5])
        check("powerCycleState false after every restart", not violations["power"], violations["power"][:5])
        check(f"retries never reached 0 during the kills; {f['recoveries']} right PINs brought them back to 8",
              not violations["zero"], violations["zero"][:5])
        final_checks(device)
    except Fail as e:
        check.fail(str(e))
    except Exception as e:
        check.fail(f"{type(e).__name__}: {e}; stderr: {device.stderr_tail()}")
    finally:
        device.kill()
        device.disconnect()
    print(f"     P: whole run {time.monotonic() - started:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs around wrong PINs (default 200)")
    parser.add_argument("--max-delay-ms", type=float, default=3.0,
                        help="kill delays are uniform in [0, this] ms from the PIN command (default 3)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        check.fail(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        sys.exit(check.summary())
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"     seed {seed}")
    rng = random.Random(seed)
    # Under /tmp: a UNIX socket path is at most 107 bytes.
    with tempfile.TemporaryDirectory(prefix="tm-pin-kill-", dir="/tmp") as root:
        run(root, args.kills, args.max_delay_ms / 1000, rng)
    sys.exit(check.summary())


if __name__ == "__main__":
    main()
