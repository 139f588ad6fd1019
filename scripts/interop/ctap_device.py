#!/usr/bin/env python3
"""`tokenmint fido2 device` driven as a CTAP 2.1 security key by python-fido2
(Yubico, `fido2` 2.x), over its UNIX-domain socket of raw 64-byte CTAPHID
reports (CTAP 2.1 §11.2; no report-ID byte).

The transport is python-fido2's own: a `SocketConnection` (a
fido2.hid.base.CtapHidConnection of a few lines) under fido2.hid.CtapHidDevice,
then fido2.ctap2.Ctap2, fido2.client.Fido2Client and fido2.server.Fido2Server.
Attestation objects, authenticator data and signatures are checked with
python-fido2's classes (AttestationObject, AuthenticatorData, CoseKey,
fido2.attestation), never with TokenMint's code. The device is started and
stopped here (a temporary folder holds its state and its socket).

Checks, in order:

P  process: `fido2 device --socket S --state D` prints exactly
   "listening on S" and S is a socket of mode 0600.
H  CTAPHID through python-fido2: INIT (nonce echoed, a fresh channel,
   CTAPHID version 2, capabilities exactly WINK|CBOR|NMSG); PING of 1000
   bytes and of 7609 bytes (the largest CTAPHID message: 128 continuation
   packets) echoed; WINK; MSG answered ERR_INVALID_CMD (no CTAP1/U2F); a
   second connection (a second host) gets another channel and both work
   interleaved, then in two parallel threads (python-fido2 retrying on
   ERR_CHANNEL_BUSY).
C  CTAP2 through fido2.ctap2.Ctap2 (strict canonical-CBOR responses):
   getNextAssertion before any getAssertion -> NOT_ALLOWED; getInfo (versions
   FIDO_2_0 and FIDO_2_1 and no U2F_V2, 16-byte AAGUID, options rk/up/uv true,
   plat false, no clientPin/pinUvAuthToken, algorithms ES256 and EdDSA,
   extensions exactly credBlob/credProtect/largeBlobKey/minPinLength,
   1024 <= maxMsgSize <= 7609, maxCredBlobLength >= 32); selection;
   makeCredential ES256 / EdDSA x rk false / true, each attestation object
   verified (AttestationObject round trip, rpIdHash, flags UP/UV/AT, AAGUID,
   COSE key algorithm, packed/none statement through fido2.attestation, and a
   packed signature refused over another clientDataHash); pubKeyCredParams
   preference order and an unsupported algorithm (UNSUPPORTED_ALGORITHM);
   makeCredential up=false (INVALID_OPTION); getAssertion with an allow list,
   signature verified with the credential's CoseKey, for both algorithms;
   getAssertion up=false (silent: UP clear, still signed); getAssertion with
   the rk option (UNSUPPORTED_OPTION); the sign counter rising;
   getNextAssertion after a single-credential getAssertion -> NOT_ALLOWED;
   three discoverable credentials of one RP walked with getNextAssertion
   (numberOfCredentials 3, newest first, user ids, signatures), then one more
   getNextAssertion -> NOT_ALLOWED; a second discoverable credential for the
   same RP and user id replaces the first; excludeList -> CREDENTIAL_EXCLUDED
   (a credential of another RP in it is no obstacle); an unknown RP, another
   RP's credential and an unknown credential ID -> NO_CREDENTIALS;
   credProtect 2 (not discoverable with uv=false, discoverable with uv=true,
   usable from an allow list without uv) and 3 (needs uv even with an allow
   list); credBlob stored and returned ("credBlob": true at getAssertion;
   oversized -> credBlob false at makeCredential, empty at getAssertion);
   largeBlobKey (0x05 at makeCredential, the same key as 0x07 at
   getAssertion, distinct per credential, refused for a non-discoverable
   credential with INVALID_OPTION); minPinLength accepted; makeCredential
   without clientDataHash through Ctap2.send_cbor (MISSING_PARAMETER).
R  raw CTAPHID reports written to the socket here (a second and third
   host), each followed by a getInfo through python-fido2 on the first host:
   INIT on the broadcast channel (17-byte answer) and on an allocated channel
   (resynchronization, same channel); a continuation packet with a wrong
   sequence number (ERR_INVALID_SEQ); an unknown command (ERR_INVALID_CMD); a
   length beyond maxMsgSize (ERR_INVALID_LEN); an unallocated channel,
   channel 0 and a PING on the broadcast channel (ERR_INVALID_CHANNEL); an initialization packet on channel B
   while channel A's message is half sent (ERR_CHANNEL_BUSY to B, A's message
   then completes); a stray continuation packet and a CANCEL with nothing
   running (both unanswered); a half-sent message abandoned (ERR_MSG_TIMEOUT
   to its host, the device free again); a host disconnecting mid-message (the
   device not left busy); CBOR garbage (status INVALID_CBOR 0x12), an unknown
   CTAP2 command byte (INVALID_COMMAND 0x01), makeCredential without
   clientDataHash (MISSING_PARAMETER 0x14).
W  (runs once getInfo lists a PIN/UV auth protocol, which python-fido2's
   Fido2Client needs to use the device's user verification: skipped, and
   said so, until ClientPIN is served)
   fido2.client.Fido2Client (origin https://example.org, a UserInteraction
   that never prompts) + fido2.server.Fido2Server (RP example.org): register
   with resident key and user verification required (credProps rk true),
   authenticate with an allow list and discoverably (user handle), and a
   registration through python-fido2's own extension processors
   (credentialProtectionPolicy userVerificationRequired -> credProtect 3,
   credBlob), asserted discoverably with getCredBlob.
S  restart: SIGTERM with hosts connected (exit 0, socket removed), the same
   --state again: a credential made before still asserts with its key and a
   higher counter, the discoverable credentials and a credBlob are all there,
   Fido2Client / Fido2Server authenticate again.
X  reset: authenticatorReset, then NO_CREDENTIALS for a credential made
   before, discoverable or from an allow list; a new credential can be made;
   after one more restart the reset still holds; the last SIGTERM exits 0
   and removes the socket.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed`; exits 1 on any failure.
"""
import hashlib
import logging
import os
import queue
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

from fido2 import cbor
from fido2.attestation import Attestation, AttestationType, InvalidSignature
from fido2.client import DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.cose import CoseKey, EdDSA, ES256
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.hid import CAPABILITY, CTAPHID, ConnectionFailure, CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor
from fido2.server import Fido2Server
from fido2.webauthn import (
    AttestationObject,
    AuthenticatorData,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialUserEntity,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from tmcli import TOKENMINT, Checks, Fail, expect

checks = Checks()
# python-fido2 logs a warning each time it retries on ERR_CHANNEL_BUSY (the
# parallel-hosts check provokes that on purpose).
logging.getLogger("fido2.hid").setLevel(logging.ERROR)

REPORT = 64
BROADCAST = 0xFFFFFFFF
TYPE_INIT = 0x80
LARGEST_MESSAGE = 57 + 128 * 59  # one initialization + 128 continuation packets
KEEPALIVE = 0x3B

# CTAPHID ERROR codes (CTAP 2.1 §11.2.9.1.6)
ERR_INVALID_CMD, ERR_INVALID_LEN, ERR_INVALID_SEQ = 0x01, 0x03, 0x04
ERR_MSG_TIMEOUT, ERR_CHANNEL_BUSY, ERR_INVALID_CHANNEL = 0x05, 0x06, 0x0B

ERR = CtapError.ERR
ES256_PARAM = {"type": "public-key", "alg": -7}
EDDSA_PARAM = {"type": "public-key", "alg": -8}
PARAMS = {-7: ES256_PARAM, -8: EDDSA_PARAM}
ALG_NAME = {-7: "ES256", -8: "EdDSA"}
FLAG = AuthenticatorData.FLAG

RP = {"id": "example.com", "name": "Example"}
ORIGIN = "https://example.org"
WEB_RP_ID = "example.org"


def sha256(data):
    return hashlib.sha256(data).digest()


def err_name(code):
    try:
        return f"{ERR(code).name} (0x{int(code):02X})"
    except ValueError:
        return f"0x{int(code):02X}"


def expect_ctap_error(code, fn, *args, **kwargs):
    """Runs fn, which must raise CtapError `code`."""
    try:
        fn(*args, **kwargs)
    except CtapError as e:
        expect(e.code == code, f"expected {err_name(code)}, got {err_name(e.code)}")
        return
    raise Fail(f"expected {err_name(code)}, the call succeeded")


def desc(cred_id):
    return {"type": "public-key", "id": cred_id}


def user(uid, name):
    return {"id": uid, "name": name, "displayName": name.title()}


# ---- transport: python-fido2's CtapHidDevice over the socket ----------------

class SocketConnection(CtapHidConnection):
    """One host of the device: a UNIX stream socket carrying raw 64-byte
    CTAPHID reports both ways."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)

    def write_packet(self, data):
        if len(data) != REPORT:
            raise ValueError(f"a report is {REPORT} bytes, not {len(data)}")
        self.sock.sendall(data)

    def read_packet(self):
        buf = b""
        while len(buf) < REPORT:
            chunk = self.sock.recv(REPORT - len(buf))
            if not chunk:
                raise ConnectionFailure("the device closed the connection")
            buf += chunk
        return buf

    def close(self):
        self.sock.close()


def descriptor(path):
    return HidDescriptor(path=path, vid=0, pid=0, report_size_in=REPORT, report_size_out=REPORT,
                         product_name="TokenMint", serial_number=None)


def open_device(path):
    return CtapHidDevice(descriptor(path), SocketConnection(path))


class RawHost:
    """A host writing CTAPHID reports by hand (for the bad-input checks)."""

    def __init__(self, path):
        self.conn = SocketConnection(path, timeout=5.0)

    def close(self):
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def send(self, cid, body):
        self.conn.write_packet((struct.pack(">I", cid) + body).ljust(REPORT, b"\0"))

    def send_init(self, cid, cmd, bcnt, data=b""):
        self.send(cid, struct.pack(">BH", TYPE_INIT | cmd, bcnt) + data[:57])

    def send_cont(self, cid, seq, data=b""):
        self.send(cid, bytes([seq]) + data[:59])

    def message(self, cid, cmd, data):
        """Sends a whole message, correctly framed."""
        self.send_init(cid, cmd, len(data), data[:57])
        rest, seq = data[57:], 0
        while rest:
            self.send_cont(cid, seq, rest[:59])
            rest, seq = rest[59:], seq + 1

    def read(self, timeout=5.0):
        self.conn.sock.settimeout(timeout)
        try:
            return self.conn.read_packet()
        finally:
            self.conn.sock.settimeout(5.0)

    def response(self, timeout=5.0):
        """The next whole message (KEEPALIVE skipped): (cid, cmd, data)."""
        while True:
            first = self.read(timeout)
            cid, cmd, bcnt = struct.unpack_from(">IBH", first)
            if not cmd & TYPE_INIT:
                raise Fail(f"expected an initialization packet, got {first[:8].hex()}...")
            if cmd & 0x7F != KEEPALIVE:
                break
        data, seq = first[7:7 + bcnt], 0
        while len(data) < bcnt:
            cont = self.read(timeout)
            ccid, cseq = struct.unpack_from(">IB", cont)
            expect(ccid == cid and cseq == seq, f"continuation {cseq} on channel {ccid:08x}, "
                   f"expected {seq} on {cid:08x}")
            data += cont[5:5 + min(59, bcnt - len(data))]
            seq += 1
        return cid, cmd & 0x7F, data

    def silent(self, wait=0.4):
        """True if nothing arrives within `wait` seconds."""
        try:
            self.read(wait)
        except socket.timeout:
            return True
        return False

    def init(self, cid=BROADCAST):
        nonce = os.urandom(8)
        self.send_init(cid, CTAPHID.INIT, 8, nonce)
        rcid, cmd, data = self.response()
        expect(rcid == cid, f"INIT answered on channel {rcid:08x}, sent on {cid:08x}")
        expect(cmd == CTAPHID.INIT, f"INIT answered with command 0x{cmd:02x}")
        expect(len(data) == 17, f"INIT answer of {len(data)} bytes, expected 17")
        expect(data[:8] == nonce, "INIT nonce not echoed")
        return struct.unpack_from(">I", data, 8)[0], data

    def expect_error(self, cid, code, timeout=5.0):
        rcid, cmd, data = self.response(timeout)
        got = f"command 0x{cmd:02x} data {data.hex()} on {rcid:08x}"
        expect(cmd == CTAPHID.ERROR and data == bytes([code]) and rcid == cid,
               f"expected ERROR 0x{code:02x} on {cid:08x}, got {got}")

    def expect_ping(self, cid, payload, timeout=5.0):
        rcid, cmd, data = self.response(timeout)
        expect(rcid == cid and cmd == CTAPHID.PING and data == payload,
               f"expected the PING echo on {cid:08x}, got command 0x{cmd:02x} data "
               f"{data[:8].hex()}... ({len(data)} bytes) on {rcid:08x}")

    def ping(self, cid, payload=b"ping"):
        self.message(cid, CTAPHID.PING, payload)
        self.expect_ping(cid, payload)

    def cbor(self, cid, request):
        self.message(cid, CTAPHID.CBOR, request)
        rcid, cmd, data = self.response()
        expect(rcid == cid and cmd == CTAPHID.CBOR,
               f"expected a CBOR answer on {cid:08x}, got command 0x{cmd:02x} data {data.hex()}")
        return data


# ---- the device process ------------------------------------------------------

class DeviceProcess:
    """`tokenmint fido2 device` in a folder of its own."""

    def __init__(self, root):
        self.socket_path = os.path.join(root, "ctap.sock")
        self.state = os.path.join(root, "state")
        self.log_path = os.path.join(root, "device.log")
        self.proc = None
        self.lines = None

    def _drain(self, stream, lines):
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def stderr_tail(self):
        try:
            with open(self.log_path) as f:
                return f.read()[-600:].strip()
        except OSError:
            return ""

    def start(self):
        """Starts it and returns its first stdout line (None if it exited)."""
        problem = None
        for attempt in range(2):  # the binary may be being relinked: one retry after 30 s
            if attempt:
                time.sleep(30)
            try:
                with open(self.log_path, "a") as log:
                    self.proc = subprocess.Popen(
                        [TOKENMINT, "fido2", "device", "--socket", self.socket_path, "--state", self.state],
                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True)
            except OSError as e:
                problem = f"cannot run {TOKENMINT}: {e}"
                continue
            self.lines = queue.Queue()
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.lines), daemon=True).start()
            try:
                line = self.lines.get(timeout=60)
            except queue.Empty:
                line = None
            if line is not None:
                return line
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
                code = "still running, killed"
            problem = f"no 'listening on' line (exit {code}); stderr: {self.stderr_tail()}"
        raise Fail(problem)

    def stop(self):
        """SIGTERM; returns the exit code (None if it did not exit in 15 s)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self.proc = None

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


# ---- shared state between the checks ------------------------------------------

class Ctx:
    def __init__(self, root):
        self.device = DeviceProcess(root)
        self.dev = None         # python-fido2 CtapHidDevice of the first host
        self.dev2 = None        # ... of the second host
        self.ctap = None        # Ctap2 on it
        self.info = None
        self.creds = {}         # name -> dict(id, key, rp, user, counter)
        self.multi = []         # the three discoverable credentials of multi.example.com
        self.web = {}           # Fido2Client / Fido2Server state
        self.open = []          # connections to close before the end

    def need(self, *names):
        for name in names:
            expect(name in self.creds, f"needs credential {name!r}, which an earlier check did not make")
        return [self.creds[n] for n in names]

    def connect(self):
        dev = open_device(self.device.socket_path)
        self.open.append(dev)
        return dev

    def close_all(self):
        for dev in self.open:
            try:
                dev.close()
            except Exception:
                pass
        self.open = []


def make(ctx, rp_id, uid, alg=-7, rk=False, uv=True, exclude=None, extensions=None, params=None,
         name="user"):
    cdh = os.urandom(32)
    options = {"rk": True} if rk else {}
    if uv:
        options["uv"] = True
    resp = ctx.ctap.make_credential(cdh, {"id": rp_id, "name": rp_id}, user(uid, name),
                                    params or [PARAMS[alg]], exclude_list=exclude,
                                    extensions=extensions, options=options or None)
    return resp, cdh


def remember(ctx, key, resp, rp_id, uid):
    cd = resp.auth_data.credential_data
    ctx.creds[key] = {"id": cd.credential_id, "key": cd.public_key, "rp": rp_id, "user": uid,
                      "counter": resp.auth_data.counter}
    return ctx.creds[key]


def assert_with(ctx, cred, uv=None, up=None, extensions=None, allow=True):
    cdh = os.urandom(32)
    options = {}
    if uv is not None:
        options["uv"] = uv
    if up is not None:
        options["up"] = up
    a = ctx.ctap.get_assertion(cred["rp"], cdh, [desc(cred["id"])] if allow else None,
                               extensions=extensions, options=options or None)
    return a, cdh


def check_assertion(a, cdh, cred, up=True):
    """Signature, credential ID, rpIdHash, flags; returns the counter."""
    ad = a.auth_data
    expect(a.credential["id"] == cred["id"], "the assertion names another credential")
    expect(ad.rp_id_hash == sha256(cred["rp"].encode()), "rpIdHash is not SHA-256 of the RP ID")
    expect(not ad.flags & FLAG.AT, "AT set in an assertion")
    expect(bool(ad.flags & FLAG.UP) == up, f"UP flag {bool(ad.flags & FLAG.UP)}, expected {up}")
    try:
        a.verify(cdh, cred["key"])
    except Exception as e:
        raise Fail(f"the signature does not verify with the credential's CoseKey: {type(e).__name__} {e}")
    expect(ad == AuthenticatorData(bytes(ad)), "authData does not re-parse")
    return ad.counter


# ---- P: process ----------------------------------------------------------------

def p_start(ctx):
    line = ctx.device.start()
    expect(line == f"listening on {ctx.device.socket_path}",
           f"first stdout line {line!r}, expected 'listening on {ctx.device.socket_path}'")
    st = os.lstat(ctx.device.socket_path)
    expect(stat.S_ISSOCK(st.st_mode), "the socket path is not a socket")
    expect(stat.S_IMODE(st.st_mode) == 0o600, f"socket mode {oct(stat.S_IMODE(st.st_mode))}, expected 0o600")


def p_stop(ctx, what):
    try:
        code = ctx.device.stop()
    finally:
        ctx.close_all()
        ctx.dev = ctx.dev2 = ctx.ctap = None
    expect(code == 0, f"exit code {code} after SIGTERM ({what}); stderr: {ctx.device.stderr_tail()}")
    expect(not os.path.exists(ctx.device.socket_path), "the socket file is still there")


# ---- H: CTAPHID through python-fido2 ---------------------------------------------

def h_init(ctx):
    ctx.dev = ctx.connect()  # CtapHidDevice() runs INIT and checks the nonce itself
    dev = ctx.dev
    expect(dev._channel_id not in (0, BROADCAST), f"allocated channel {dev._channel_id:08x}")
    expect(dev.version == 2, f"CTAPHID protocol version {dev.version}, expected 2")
    want = CAPABILITY.WINK | CAPABILITY.CBOR | CAPABILITY.NMSG
    expect(dev.capabilities == want, f"capabilities 0x{dev.capabilities:02x}, expected 0x{int(want):02x}")


def h_ping(ctx, size):
    payload = os.urandom(size)
    got = ctx.dev.ping(payload)
    expect(got == payload, f"PING of {size} bytes echoed as {len(got)} bytes"
           + ("" if len(got) != size else " (different content)"))


def h_wink(ctx):
    got = ctx.dev.call(CTAPHID.WINK)
    expect(got == b"", f"WINK answered {got.hex()}")


def h_msg(ctx):
    # a U2F VERSION APDU
    expect_ctap_error(ERR.INVALID_COMMAND, ctx.dev.call, CTAPHID.MSG, bytes.fromhex("0003000000"))


def h_second_host(ctx):
    dev2 = ctx.connect()
    expect(dev2._channel_id != ctx.dev._channel_id,
           f"both hosts got channel {dev2._channel_id:08x}")
    ctap2 = Ctap2(dev2)
    for i in range(3):
        a, b = os.urandom(100 + i), os.urandom(300 + i)
        expect(ctx.dev.ping(a) == a, "host 1 PING wrong after host 2 joined")
        expect(dev2.ping(b) == b, "host 2 PING wrong")
        expect(ctx.ctap.get_info().aaguid == ctap2.get_info().aaguid, "the hosts see different AAGUIDs")
    ctx.dev2 = dev2


def h_parallel(ctx):
    expect(ctx.dev2 is not None, "needs the second host")
    errors = []
    barrier = threading.Barrier(2)

    def worker(dev, tag):
        try:
            ctap = Ctap2(dev)
            barrier.wait()
            for i in range(15):
                payload = os.urandom(700 + i)
                got = dev.ping(payload)
                if got != payload:
                    errors.append(f"{tag}: PING {i} echoed wrongly ({len(got)} bytes)")
                info = ctap.get_info()
                if "FIDO_2_1" not in info.versions:
                    errors.append(f"{tag}: getInfo {i} wrong")
        except Exception as e:
            errors.append(f"{tag}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(d, t)) for d, t in ((ctx.dev, "host 1"), (ctx.dev2, "host 2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    expect(not any(t.is_alive() for t in threads), "a host hung")
    expect(not errors, "; ".join(errors[:3]))


# ---- C: CTAP2 -------------------------------------------------------------------

def c_next_first(ctx):
    ctx.ctap = Ctap2(ctx.dev)  # its own getInfo is not a getAssertion
    expect_ctap_error(ERR.NOT_ALLOWED, ctx.ctap.get_next_assertion)


def c_info(ctx):
    info = ctx.ctap.get_info()
    ctx.info = info
    expect({"FIDO_2_0", "FIDO_2_1"} <= set(info.versions), f"versions {info.versions}")
    expect("U2F_V2" not in info.versions, "U2F_V2 listed, but CTAPHID_MSG is not served (NMSG)")
    expect(len(bytes(info.aaguid)) == 16, f"AAGUID of {len(bytes(info.aaguid))} bytes")
    opts = info.options
    for name in ("rk", "up", "uv"):
        expect(opts.get(name) is True, f"option {name} is {opts.get(name)!r}, expected true")
    expect(opts.get("plat") is False, f"option plat is {opts.get('plat')!r}, expected false")
    for name in ("clientPin", "pinUvAuthToken"):
        expect(name not in opts, f"option {name} listed (clientPIN is not served yet)")
    algs = [a.get("alg") for a in info.algorithms]
    expect(-7 in algs and -8 in algs, f"algorithms {info.algorithms}")
    expect(all(a.get("type") == "public-key" for a in info.algorithms), f"algorithms {info.algorithms}")
    want = ["credBlob", "credProtect", "largeBlobKey", "minPinLength"]
    expect(sorted(info.extensions) == want and len(info.extensions) == 4,
           f"extensions {info.extensions}, expected {want} in any order")
    expect(1024 <= info.max_msg_size <= LARGEST_MESSAGE,
           f"maxMsgSize {info.max_msg_size}, expected 1024..{LARGEST_MESSAGE}")
    expect(info.max_cred_blob_length >= 32, f"maxCredBlobLength {info.max_cred_blob_length}, at least 32")


def c_selection(ctx):
    ctx.ctap.selection()


def check_attestation(ctx, resp, cdh, rp_id, alg, uv):
    info = ctx.info
    expect(resp.fmt in ("none", "packed"), f"fmt {resp.fmt!r}")
    ao = AttestationObject.create(resp.fmt, resp.auth_data, resp.att_stmt)
    again = AttestationObject(bytes(ao))
    expect(again.fmt == resp.fmt and again.auth_data == resp.auth_data and again.att_stmt == resp.att_stmt,
           "the attestation object does not round-trip")
    ad = AuthenticatorData(bytes(resp.auth_data))
    expect(ad.rp_id_hash == sha256(rp_id.encode()), "rpIdHash is not SHA-256 of the RP ID")
    expect(ad.flags & FLAG.UP, "UP not set")
    expect(ad.flags & FLAG.AT, "AT not set")
    if uv:
        expect(ad.flags & FLAG.UV, "UV not set though uv=true was asked")
    cd = ad.credential_data
    expect(cd.aaguid == info.aaguid or (resp.fmt == "none" and not any(bytes(cd.aaguid))),
           f"AAGUID {bytes(cd.aaguid).hex()} differs from getInfo's {bytes(info.aaguid).hex()}")
    expect(1 <= len(cd.credential_id) <= (info.max_cred_id_length or 1023),
           f"credential ID of {len(cd.credential_id)} bytes (maxCredIdLength {info.max_cred_id_length})")
    key = cd.public_key
    expect(key.ALGORITHM == alg and key[3] == alg,
           f"COSE key algorithm {key.get(3)}, expected {alg} ({ALG_NAME[alg]})")
    expect(isinstance(key, ES256 if alg == -7 else EdDSA), f"COSE key class {type(key).__name__}")
    expect(CoseKey.for_alg(alg) is type(key), "CoseKey.for_alg disagrees")
    try:
        result = Attestation.for_type(resp.fmt)().verify(resp.att_stmt, ad, cdh)
    except Exception as e:
        raise Fail(f"fido2.attestation {resp.fmt} refused it: {type(e).__name__}: {e}")
    if resp.fmt == "packed":
        expect(resp.att_stmt.get("alg") == alg or "x5c" in resp.att_stmt,
               f"packed self attestation alg {resp.att_stmt.get('alg')}, expected {alg}")
        expect(result.attestation_type in (AttestationType.SELF, AttestationType.BASIC),
               f"attestation type {result.attestation_type!r}")
        try:
            Attestation.for_type("packed")().verify(resp.att_stmt, ad, os.urandom(32))
        except InvalidSignature:
            pass
        else:
            raise Fail("the packed signature also verifies over another clientDataHash")
    else:
        expect(resp.att_stmt == {}, f"none attStmt {resp.att_stmt}")
    return key


def c_make(ctx, alg, rk):
    uid = os.urandom(16)
    resp, cdh = make(ctx, RP["id"], uid, alg, rk=rk)
    check_attestation(ctx, resp, cdh, RP["id"], alg, uv=True)
    expect(resp.large_blob_key is None, "a largeBlobKey (0x05) nobody asked for")
    remember(ctx, f"{ALG_NAME[alg]}-{'rk' if rk else 'nonrk'}", resp, RP["id"], uid)


def c_alg_choice(ctx):
    resp, _ = make(ctx, "algs.example.com", os.urandom(8), params=[EDDSA_PARAM, ES256_PARAM])
    expect(resp.auth_data.credential_data.public_key[3] == -8, "[EdDSA, ES256]: EdDSA not chosen")
    resp, _ = make(ctx, "algs.example.com", os.urandom(8),
                   params=[{"type": "public-key", "alg": -257}, ES256_PARAM, EDDSA_PARAM])
    expect(resp.auth_data.credential_data.public_key[3] == -7, "[RS256, ES256, EdDSA]: ES256 not chosen")
    expect_ctap_error(ERR.UNSUPPORTED_ALGORITHM, make, ctx, "algs.example.com", os.urandom(8),
                      params=[{"type": "public-key", "alg": -257}])


def c_make_up_false(ctx):
    expect_ctap_error(ERR.INVALID_OPTION, ctx.ctap.make_credential, os.urandom(32), RP,
                      user(os.urandom(8), "x"), [ES256_PARAM], options={"up": False})


def c_assert(ctx, name):
    cred, = ctx.need(name)
    a, cdh = assert_with(ctx, cred)
    n = check_assertion(a, cdh, cred)
    expect(n > cred["counter"], f"signCount {n} not above makeCredential's {cred['counter']}")
    cred["counter"] = n
    if name.endswith("-rk"):
        expect(a.user is not None and a.user.get("id") == cred["user"], f"user {a.user}")


def c_silent(ctx):
    cred, = ctx.need("ES256-nonrk")
    a, cdh = assert_with(ctx, cred, up=False)
    n = check_assertion(a, cdh, cred, up=False)
    expect(not a.auth_data.flags & FLAG.UV, "UV set without uv")
    cred["counter"] = max(cred["counter"], n)


def c_rk_option(ctx):
    cred, = ctx.need("ES256-nonrk")
    expect_ctap_error(ERR.UNSUPPORTED_OPTION, ctx.ctap.get_assertion, cred["rp"], os.urandom(32),
                      [desc(cred["id"])], options={"rk": True})


def c_counter(ctx):
    for name in ("ES256-nonrk", "EdDSA-rk"):
        cred, = ctx.need(name)
        seen = [cred["counter"]]
        for _ in range(3):
            a, cdh = assert_with(ctx, cred)
            seen.append(check_assertion(a, cdh, cred))
        expect(all(x < y for x, y in zip(seen, seen[1:])), f"{name}: counters {seen} not strictly rising")
        cred["counter"] = seen[-1]


def c_next_after_single(ctx):
    cred, = ctx.need("ES256-rk")
    a, _ = assert_with(ctx, cred)
    expect(a.number_of_credentials in (None, 1), f"numberOfCredentials {a.number_of_credentials}")
    expect_ctap_error(ERR.NOT_ALLOWED, ctx.ctap.get_next_assertion)


def c_discoverable(ctx):
    rp_id = "multi.example.com"
    ctx.multi = []
    for i, alg in enumerate((-7, -8, -7)):
        uid = bytes([i + 1]) * 8 + os.urandom(8)
        resp, _ = make(ctx, rp_id, uid, alg, rk=True, name=f"user{i + 1}")
        ctx.multi.append(remember(ctx, f"multi{i + 1}", resp, rp_id, uid))
    cdh = os.urandom(32)
    first = ctx.ctap.get_assertion(rp_id, cdh, options={"uv": True})
    expect(first.number_of_credentials == 3, f"numberOfCredentials {first.number_of_credentials}, expected 3")
    got = [first] + [ctx.ctap.get_next_assertion() for _ in range(2)]
    by_id = {c["id"]: c for c in ctx.multi}
    for i, a in enumerate(got):
        cred = by_id.get(a.credential["id"])
        expect(cred is not None, f"assertion {i + 1} names an unknown credential")
        check_assertion(a, cdh, cred)
        expect(a.auth_data.flags & FLAG.UV, f"assertion {i + 1}: UV not set with uv=true")
        expect(a.user is not None and a.user.get("id") == cred["user"],
               f"assertion {i + 1}: user {a.user}, expected id {cred['user'].hex()}")
        if i:
            expect(a.number_of_credentials is None, f"getNextAssertion {i} carries numberOfCredentials")
        cred["counter"] = a.auth_data.counter
    ids = [a.credential["id"] for a in got]
    expect(len(set(ids)) == 3, "getNextAssertion repeated a credential")
    expect_ctap_error(ERR.NOT_ALLOWED, ctx.ctap.get_next_assertion)


def c_discoverable_order(ctx):
    expect(len(ctx.multi) == 3, "needs the three discoverable credentials")
    cdh = os.urandom(32)
    got = ctx.ctap.get_assertions("multi.example.com", cdh, options={"uv": True})
    order = [a.credential["id"] for a in got]
    want = [c["id"] for c in reversed(ctx.multi)]
    expect(order == want, "credentials not returned newest first (CTAP 2.1 §6.2.2): got users "
           + ", ".join(str(a.user.get("id", b"?")[:1].hex()) for a in got))


def c_overwrite(ctx):
    """CTAP 2.1 §6.1.2: a discoverable credential for an rp.id and user id
    that already have one overwrites it."""
    rp_id, uid = "overwrite.example.com", os.urandom(16)
    old, _ = make(ctx, rp_id, uid, rk=True, name="first")
    new, _ = make(ctx, rp_id, uid, rk=True, name="second")
    old_id = old.auth_data.credential_data.credential_id
    new_id = new.auth_data.credential_data.credential_id
    expect(old_id != new_id, "the second credential has the first's ID")
    found = ctx.ctap.get_assertions(rp_id, os.urandom(32), options={"uv": True})
    ids = [a.credential["id"] for a in found]
    problems = []
    if ids != [new_id]:
        problems.append(f"discoverable getAssertion found {len(ids)} credentials for the one user id "
                        f"(numberOfCredentials {found[0].number_of_credentials}; old one among them: "
                        f"{old_id in ids}), expected only the second")
    try:
        ctx.ctap.get_assertion(rp_id, os.urandom(32), [desc(old_id)])
        problems.append("the overwritten credential still asserts from an allow list")
    except CtapError as e:
        if e.code != ERR.NO_CREDENTIALS:
            problems.append(f"the overwritten credential: {err_name(e.code)}, expected NO_CREDENTIALS")
    expect(not problems, "; ".join(problems))


def c_exclude(ctx):
    cred, other = ctx.need("ES256-nonrk", "multi1")
    expect_ctap_error(ERR.CREDENTIAL_EXCLUDED, make, ctx, RP["id"], os.urandom(8),
                      exclude=[desc(os.urandom(32)), desc(cred["id"])])
    resp, _ = make(ctx, RP["id"], os.urandom(8), exclude=[desc(other["id"])])
    expect(resp.auth_data.credential_data is not None, "no credential made")


def c_no_credentials(ctx):
    cred, = ctx.need("ES256-rk")
    expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, "unknown.example.net", os.urandom(32))
    expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, "unknown.example.net", os.urandom(32),
                      [desc(cred["id"])])
    expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, RP["id"], os.urandom(32),
                      [desc(os.urandom(len(cred["id"])))])


def c_cred_protect_2(ctx):
    rp_id, uid = "protect2.example.com", os.urandom(16)
    resp, _ = make(ctx, rp_id, uid, rk=True, extensions={"credProtect": 2})
    ext = resp.auth_data.extensions or {}
    expect(resp.auth_data.flags & FLAG.ED and ext.get("credProtect") == 2,
           f"makeCredential extensions {ext}, expected credProtect 2")
    cred = remember(ctx, "protect2", resp, rp_id, uid)
    expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, rp_id, os.urandom(32), options={"uv": False})
    cdh = os.urandom(32)
    a = ctx.ctap.get_assertion(rp_id, cdh, options={"uv": True})
    check_assertion(a, cdh, cred)
    expect(a.auth_data.flags & FLAG.UV, "UV not set with uv=true")
    a, cdh = assert_with(ctx, cred, uv=False)
    check_assertion(a, cdh, cred)
    expect(not a.auth_data.flags & FLAG.UV, "UV set with uv=false")


def c_cred_protect_3(ctx):
    rp_id, uid = "protect3.example.com", os.urandom(16)
    resp, _ = make(ctx, rp_id, uid, rk=True, extensions={"credProtect": 3})
    ext = resp.auth_data.extensions or {}
    expect(ext.get("credProtect") == 3, f"makeCredential extensions {ext}, expected credProtect 3")
    cred = remember(ctx, "protect3", resp, rp_id, uid)
    expect_ctap_error(ERR.NO_CREDENTIALS, assert_with, ctx, cred, uv=False)
    expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, rp_id, os.urandom(32), options={"uv": False})
    a, cdh = assert_with(ctx, cred, uv=True)
    check_assertion(a, cdh, cred)
    expect(a.auth_data.flags & FLAG.UV, "UV not set with uv=true")


def c_cred_blob(ctx):
    rp_id, uid = "blob.example.com", os.urandom(16)
    blob = os.urandom(32)
    resp, _ = make(ctx, rp_id, uid, rk=True, extensions={"credBlob": blob})
    ext = resp.auth_data.extensions or {}
    expect(ext.get("credBlob") is True, f"makeCredential extensions {ext}, expected credBlob true")
    cred = remember(ctx, "blob", resp, rp_id, uid)
    # CTAP 2.1 §12.2: the getAssertion input is "credBlob": true (WebAuthn's
    # getCredBlob is the client-side name; python-fido2 maps it to this).
    a, cdh = assert_with(ctx, cred, extensions={"credBlob": True})
    check_assertion(a, cdh, cred)
    ext = a.auth_data.extensions or {}
    expect(a.auth_data.flags & FLAG.ED and ext.get("credBlob") == blob,
           f"getAssertion extensions {ext}, expected credBlob = the stored {blob.hex()}")
    a = ctx.ctap.get_assertion(rp_id, os.urandom(32), options={"uv": True}, extensions={"credBlob": True})
    expect((a.auth_data.extensions or {}).get("credBlob") == blob, "discoverable: credBlob not returned")
    a, _ = assert_with(ctx, cred)
    expect("credBlob" not in (a.auth_data.extensions or {}), "credBlob returned unasked")


def c_cred_blob_too_long(ctx):
    expect(ctx.info is not None, "needs getInfo")
    rp_id, uid = "bigblob.example.com", os.urandom(16)
    resp, _ = make(ctx, rp_id, uid, rk=True, extensions={"credBlob": os.urandom(ctx.info.max_cred_blob_length + 1)})
    ext = resp.auth_data.extensions or {}
    expect(ext.get("credBlob") is False, f"makeCredential extensions {ext}, expected credBlob false")
    cred = remember(ctx, "bigblob", resp, rp_id, uid)
    a, _ = assert_with(ctx, cred, extensions={"credBlob": True})
    ext = a.auth_data.extensions or {}
    expect(ext.get("credBlob") == b"", f"getAssertion extensions {ext}, expected credBlob = empty bytes")


def c_large_blob_key(ctx):
    rp_id = "largeblob.example.com"
    keys = []
    for i in range(2):
        uid = os.urandom(16)
        resp, _ = make(ctx, rp_id, uid, rk=True, extensions={"largeBlobKey": True})
        key = resp.large_blob_key
        expect(isinstance(key, bytes) and len(key) == 32, f"makeCredential largeBlobKey (0x05) {key!r}")
        cred = remember(ctx, f"largeblob{i}", resp, rp_id, uid)
        a, cdh = assert_with(ctx, cred, extensions={"largeBlobKey": True})
        check_assertion(a, cdh, cred)
        expect(a.large_blob_key == key, f"getAssertion largeBlobKey (0x07) {a.large_blob_key!r}, not the same key")
        a, _ = assert_with(ctx, cred)
        expect(a.large_blob_key is None, "largeBlobKey returned unasked")
        keys.append(key)
    expect(keys[0] != keys[1], "two credentials share a largeBlobKey")
    found = ctx.ctap.get_assertions(rp_id, os.urandom(32), extensions={"largeBlobKey": True},
                                    options={"uv": True})
    expect(sorted(a.large_blob_key for a in found) == sorted(keys), "discoverable: largeBlobKeys differ")


def c_large_blob_key_nonrk(ctx):
    expect_ctap_error(ERR.INVALID_OPTION, make, ctx, "largeblob.example.com", os.urandom(8),
                      extensions={"largeBlobKey": True})


def c_min_pin_length(ctx):
    resp, _ = make(ctx, "minpin.example.com", os.urandom(8), rk=True, extensions={"minPinLength": True})
    ext = resp.auth_data.extensions or {}
    # No RP ID is authorized (setMinPINLength is not served): no output, or
    # at most the current minimum PIN length.
    expect("minPinLength" not in ext or ext["minPinLength"] == ctx.info.min_pin_length,
           f"minPinLength output {ext.get('minPinLength')!r}")


def c_missing_cdh(ctx):
    expect_ctap_error(ERR.MISSING_PARAMETER, ctx.ctap.send_cbor, Ctap2.CMD.MAKE_CREDENTIAL,
                      {2: RP, 3: user(b"u", "u"), 4: [ES256_PARAM]})


# ---- R: raw CTAPHID ------------------------------------------------------------------

def alive(ctx):
    info = ctx.ctap.get_info()
    expect("FIDO_2_1" in info.versions, "getInfo on the first host failed afterwards")


def raw_check(ctx, fn):
    with RawHost(ctx.device.socket_path) as host:
        fn(ctx, host)
    try:
        alive(ctx)
    except (Fail, CtapError, OSError, ConnectionFailure) as e:
        raise Fail(f"afterwards the device no longer answers getInfo: {e}")


def r_init(ctx, host):
    cid, data = host.init()
    expect(cid not in (0, BROADCAST), f"allocated {cid:08x}")
    expect(cid != ctx.dev._channel_id, "a channel already in use was allocated again")
    expect(data[12] == 2, f"protocol version {data[12]}")
    expect(data[16] == 0x0D, f"capabilities 0x{data[16]:02x}, expected 0x0d")
    again, data = host.init(cid)
    expect(again == cid, f"INIT on allocated channel {cid:08x} answered with channel {again:08x}")
    host.ping(cid)


def r_bad_seq(ctx, host):
    cid, _ = host.init()
    payload = os.urandom(150)
    host.send_init(cid, CTAPHID.PING, len(payload), payload)
    host.send_cont(cid, 1, payload[57:])  # sequence 1 where 0 is due
    host.expect_error(cid, ERR_INVALID_SEQ)
    host.ping(cid)


def r_bad_cmd(ctx, host):
    cid, _ = host.init()
    host.send_init(cid, 0x2A, 0)
    host.expect_error(cid, ERR_INVALID_CMD)
    host.ping(cid)


def r_bad_len(ctx, host):
    cid, _ = host.init()
    limit = max(ctx.info.max_msg_size if ctx.info else 0, LARGEST_MESSAGE)
    host.send_init(cid, CTAPHID.PING, limit + 1, b"x" * 57)
    host.expect_error(cid, ERR_INVALID_LEN)
    host.send_init(cid, CTAPHID.CBOR, 0xFFFF, b"\x04" + b"\0" * 56)
    host.expect_error(cid, ERR_INVALID_LEN)
    host.ping(cid)


def r_bad_channel(ctx, host):
    cid, _ = host.init()
    stranger = (cid ^ 0x5A5A0000) or 0x5A5A5A5A
    host.send_init(stranger, CTAPHID.PING, 4, b"ping")
    host.expect_error(stranger, ERR_INVALID_CHANNEL)
    host.send_init(0, CTAPHID.PING, 4, b"ping")
    host.expect_error(0, ERR_INVALID_CHANNEL)
    host.send_init(BROADCAST, CTAPHID.PING, 4, b"ping")
    host.expect_error(BROADCAST, ERR_INVALID_CHANNEL)
    host.ping(cid)


def r_busy(ctx, host_a):
    with RawHost(ctx.device.socket_path) as host_b:
        cid_a, _ = host_a.init()
        cid_b, _ = host_b.init()
        payload = os.urandom(200)
        host_a.send_init(cid_a, CTAPHID.PING, len(payload), payload)  # the first 57 bytes only
        # Two sockets: nothing orders A's packet before B's at the device but time.
        time.sleep(0.1)
        host_b.send_init(cid_b, CTAPHID.PING, 4, b"busy")
        host_b.expect_error(cid_b, ERR_CHANNEL_BUSY)
        rest, seq = payload[57:], 0
        while rest:
            host_a.send_cont(cid_a, seq, rest)
            rest, seq = rest[59:], seq + 1
        host_a.expect_ping(cid_a, payload)
        host_b.ping(cid_b, b"busy")


def r_stray(ctx, host):
    cid, _ = host.init()
    host.send_cont(cid, 0, b"stray")
    expect(host.silent(), "a stray continuation packet was answered")
    host.send_init(cid, CTAPHID.CANCEL, 0)
    expect(host.silent(), "a CANCEL with nothing running was answered")
    host.ping(cid)


def r_timeout(ctx, host_a):
    with RawHost(ctx.device.socket_path) as host_b:
        cid_a, _ = host_a.init()
        cid_b, _ = host_b.init()
        host_a.send_init(cid_a, CTAPHID.PING, 100, b"y" * 57)  # never finished
        started = time.monotonic()
        host_a.expect_error(cid_a, ERR_MSG_TIMEOUT, timeout=5.0)
        waited = time.monotonic() - started
        host_b.ping(cid_b)
        print(f"      (ERR_MSG_TIMEOUT after {waited:.2f} s)")


def r_disconnect(ctx, host_b):
    host_c = RawHost(ctx.device.socket_path)
    cid_b, _ = host_b.init()
    cid_c, _ = host_c.init()
    host_c.send_init(cid_c, CTAPHID.PING, 300, b"z" * 57)
    host_c.close()
    started = time.monotonic()
    while True:  # ERR_CHANNEL_BUSY is fair until the device has seen the disconnect
        host_b.message(cid_b, CTAPHID.PING, b"after a disconnect")
        rcid, cmd, data = host_b.response()
        if not (cmd == CTAPHID.ERROR and data == bytes([ERR_CHANNEL_BUSY])):
            break
        expect(time.monotonic() - started < 3, "still ERR_CHANNEL_BUSY 3 s after the host left")
        time.sleep(0.05)
    expect(rcid == cid_b and cmd == CTAPHID.PING and data == b"after a disconnect",
           f"PING after the disconnect answered with command 0x{cmd:02x} data {data.hex()}")
    print(f"      (free {time.monotonic() - started:.2f} s after the disconnect)")


def r_cbor_garbage(ctx, host):
    cid, _ = host.init()
    for garbage in (b"\x01\xa1\x01", b"\x01\xff\xff\xff", b"\x02\x5b\xff\xff\xff\xff\xff\xff\xff\xff"):
        got = host.cbor(cid, garbage)
        expect(got == b"\x12", f"request {garbage.hex()}: answer {got.hex()}, expected 12 (INVALID_CBOR)")


def r_cbor_unknown(ctx, host):
    cid, _ = host.init()
    got = host.cbor(cid, b"\x2a")
    expect(got == b"\x01", f"command 0x2a: answer {got.hex()}, expected 01 (INVALID_COMMAND)")
    got = host.cbor(cid, b"\x2a" + cbor.encode({1: 1}))
    expect(got == b"\x01", f"command 0x2a with a map: answer {got.hex()}, expected 01 (INVALID_COMMAND)")


def r_cbor_missing(ctx, host):
    cid, _ = host.init()
    request = b"\x01" + cbor.encode({2: RP, 3: user(b"u", "u"), 4: [ES256_PARAM]})
    got = host.cbor(cid, request)
    expect(got == b"\x14", f"makeCredential without clientDataHash: answer {got.hex()}, expected 14")


# ---- W: Fido2Client + Fido2Server ----------------------------------------------

class NeverPrompt(UserInteraction):
    """The device verifies the user itself: nothing to ask."""

    def prompt_up(self):
        pass

    def request_pin(self, permissions, rp_id):
        return None

    def request_uv(self, permissions, rp_id):
        return True


def web_client(ctx):
    return Fido2Client(ctx.dev, DefaultClientDataCollector(origin=ORIGIN), user_interaction=NeverPrompt())


def web_server():
    return Fido2Server(PublicKeyCredentialRpEntity(id=WEB_RP_ID, name="Example"))


def w_register(ctx):
    server, client = web_server(), web_client(ctx)
    alice = PublicKeyCredentialUserEntity(id=os.urandom(16), name="alice", display_name="Alice")
    options, state = server.register_begin(alice, resident_key_requirement=ResidentKeyRequirement.REQUIRED,
                                           user_verification=UserVerificationRequirement.REQUIRED,
                                           extensions={"credProps": True})
    try:
        reg = client.make_credential(options.public_key)
    except ValueError as e:
        if "PIN/UV protocols" not in str(e):
            raise
        raise Fail(f"python-fido2 Fido2Client refused to use the device's UV: ValueError: {e} (getInfo "
                   f"pinUvAuthProtocols (0x06) = {ctx.ctap.get_info().pin_uv_protocols}; Fido2Client builds a "
                   "ClientPin whenever UV is used, and ClientPin needs a PIN/UV protocol)")
    auth_data = server.register_complete(state, reg)
    expect(auth_data.is_user_verified() and auth_data.is_user_present(), f"flags {auth_data.flags!r}")
    props = reg.client_extension_results.get("credProps")
    expect(props is not None and props.get("rk") is True, f"credProps {props}")
    ctx.web = {"user": alice, "cred": auth_data.credential_data, "counter": auth_data.counter}


def w_authenticate(ctx, discoverable):
    expect("cred" in ctx.web, "needs the Fido2Client registration")
    server, client = web_server(), web_client(ctx)
    creds = [ctx.web["cred"]]
    options, state = server.authenticate_begin(None if discoverable else creds,
                                               user_verification=UserVerificationRequirement.REQUIRED)
    selection = client.get_assertion(options.public_key)
    responses = [selection.get_response(i) for i in range(len(selection.get_assertions()))]
    mine = [r for r in responses if r.raw_id == ctx.web["cred"].credential_id]
    expect(len(mine) == 1, f"{len(responses)} responses, {len(mine)} for the registered credential")
    resp = mine[0]
    got = server.authenticate_complete(state, creds, resp)
    expect(got.credential_id == ctx.web["cred"].credential_id, "authenticate_complete picked another credential")
    ad = resp.response.authenticator_data
    expect(ad.is_user_verified(), "UV not set")
    expect(ad.counter > ctx.web["counter"], f"signCount {ad.counter} not above {ctx.web['counter']}")
    ctx.web["counter"] = ad.counter
    if discoverable:
        expect(resp.response.user_handle == ctx.web["user"].id,
               f"user handle {resp.response.user_handle!r}, expected {ctx.web['user'].id.hex()}")


def w_extensions(ctx):
    """credProtect 3 and credBlob through python-fido2's own extension
    processors. The assertion is discoverable: with an allow list
    Fido2Client first probes the list with up=false and no UV, which a
    credProtect-3 credential must not answer."""
    server, client = web_server(), web_client(ctx)
    bob = PublicKeyCredentialUserEntity(id=os.urandom(16), name="bob", display_name="Bob")
    blob = os.urandom(24)
    options, state = server.register_begin(
        bob, resident_key_requirement=ResidentKeyRequirement.REQUIRED,
        user_verification=UserVerificationRequirement.REQUIRED,
        extensions={"credentialProtectionPolicy": "userVerificationRequired",
                    "enforceCredentialProtectionPolicy": True, "credBlob": blob})
    reg = client.make_credential(options.public_key)
    auth_data = server.register_complete(state, reg)
    ext = auth_data.extensions or {}
    expect(ext.get("credProtect") == 3 and ext.get("credBlob") is True, f"registration extensions {ext}")
    creds = [auth_data.credential_data]
    options, state = server.authenticate_begin(None, user_verification=UserVerificationRequirement.REQUIRED,
                                               extensions={"getCredBlob": True})
    selection = client.get_assertion(options.public_key)
    responses = [selection.get_response(i) for i in range(len(selection.get_assertions()))]
    mine = [r for r in responses if r.raw_id == creds[0].credential_id]
    expect(len(mine) == 1, f"{len(responses)} responses, {len(mine)} for bob's credential")
    server.authenticate_complete(state, creds, mine[0])
    expect(mine[0].response.user_handle == bob.id, "user handle is not bob's")
    ext = mine[0].response.authenticator_data.extensions or {}
    expect(ext.get("credBlob") == blob, f"assertion extensions {ext}, expected credBlob {blob.hex()}")


# ---- S / X: restart and reset ---------------------------------------------------------

def s_restart(ctx):
    ctx.ctap = None
    p_start(ctx)
    ctx.dev = ctx.connect()
    ctx.ctap = Ctap2(ctx.dev)


def s_old_credential(ctx):
    for name in ("ES256-nonrk", "EdDSA-rk", "protect3"):
        cred, = ctx.need(name)
        before = cred["counter"]
        a, cdh = assert_with(ctx, cred, uv=True)
        n = check_assertion(a, cdh, cred)
        expect(n > before, f"{name}: signCount {n} not above {before} from before the restart")
        cred["counter"] = n


def s_discoverable(ctx):
    expect(len(ctx.multi) == 3, "needs the three discoverable credentials")
    got = ctx.ctap.get_assertions("multi.example.com", os.urandom(32), options={"uv": True})
    expect(sorted(a.credential["id"] for a in got) == sorted(c["id"] for c in ctx.multi),
           f"{len(got)} discoverable credentials after the restart, expected the 3 from before")
    a = ctx.ctap.get_assertion("blob.example.com", os.urandom(32), options={"uv": True},
                               extensions={"credBlob": True})
    expect("blob" in ctx.creds and a.credential["id"] == ctx.creds["blob"]["id"], "credBlob credential gone")
    expect((a.auth_data.extensions or {}).get("credBlob"), "credBlob lost in the restart")


def x_reset(ctx):
    ctx.ctap.reset()
    gone(ctx)
    resp, _ = make(ctx, RP["id"], os.urandom(8), rk=True)
    ctx.creds["after-reset"] = {"id": resp.auth_data.credential_data.credential_id}


def gone(ctx):
    for name in ("ES256-nonrk", "EdDSA-rk", "multi1"):
        cred, = ctx.need(name)
        expect_ctap_error(ERR.NO_CREDENTIALS, assert_with, ctx, cred, uv=True)
    for rp_id in ("multi.example.com", "blob.example.com"):
        expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, rp_id, os.urandom(32), options={"uv": True})
    if "cred" in ctx.web:
        expect_ctap_error(ERR.NO_CREDENTIALS, ctx.ctap.get_assertion, WEB_RP_ID, os.urandom(32),
                          [desc(ctx.web["cred"].credential_id)])


def x_after_restart(ctx):
    gone(ctx)
    cred = ctx.creds.get("after-reset")
    expect(cred is not None, "needs the credential made after the reset")
    a = ctx.ctap.get_assertion(RP["id"], os.urandom(32), options={"uv": True})
    expect(a.credential["id"] == cred["id"], "the credential made after the reset is gone")


# ---- main ---------------------------------------------------------------------------------

def run(ctx):
    g = checks.group
    if not g("P: device starts, prints 'listening on PATH', socket mode 0600", p_start, ctx):
        return
    if not g("H: INIT through python-fido2 (nonce, channel, version 2, WINK|CBOR|NMSG)", h_init, ctx):
        return
    g("H: PING of 1000 bytes echoed", h_ping, ctx, 1000)
    g(f"H: PING of {LARGEST_MESSAGE} bytes (128 continuation packets) echoed", h_ping, ctx, LARGEST_MESSAGE)
    g("H: WINK", h_wink, ctx)
    g("H: MSG answered ERR_INVALID_CMD (no U2F)", h_msg, ctx)

    if not g("C: getNextAssertion before any getAssertion -> NOT_ALLOWED", c_next_first, ctx):
        ctx.ctap = ctx.ctap or Ctap2(ctx.dev, strict_cbor=False)
    g("C: getInfo (versions, AAGUID, options, algorithms, extensions, maxMsgSize)", c_info, ctx)
    if ctx.info is None:
        ctx.info = ctx.ctap.info
    g("H: a second host gets another channel; both work interleaved", h_second_host, ctx)
    g("H: two hosts in parallel threads (PING + getInfo x 15 each)", h_parallel, ctx)
    g("C: selection", c_selection, ctx)
    for alg in (-7, -8):
        for rk in (False, True):
            g(f"C: makeCredential {ALG_NAME[alg]} rk={str(rk).lower()}: attestation object verified",
              c_make, ctx, alg, rk)
    g("C: pubKeyCredParams order honoured; only RS256 -> UNSUPPORTED_ALGORITHM", c_alg_choice, ctx)
    g("C: makeCredential up=false -> INVALID_OPTION", c_make_up_false, ctx)
    for name in ("ES256-nonrk", "EdDSA-nonrk", "ES256-rk", "EdDSA-rk"):
        g(f"C: getAssertion with allow list ({name}): signature verified with its CoseKey", c_assert, ctx, name)
    g("C: getAssertion up=false: UP clear, still signed", c_silent, ctx)
    g("C: getAssertion with the rk option -> UNSUPPORTED_OPTION", c_rk_option, ctx)
    g("C: sign counter rising (3 assertions each, ES256 and EdDSA)", c_counter, ctx)
    g("C: getNextAssertion after a single-credential getAssertion -> NOT_ALLOWED", c_next_after_single, ctx)
    g("C: 3 discoverable credentials walked with getNextAssertion, then NOT_ALLOWED", c_discoverable, ctx)
    g("C: discoverable credentials come newest first", c_discoverable_order, ctx)
    g("C: a discoverable credential for the same RP and user id replaces the old one", c_overwrite, ctx)
    g("C: excludeList -> CREDENTIAL_EXCLUDED (another RP's credential is no obstacle)", c_exclude, ctx)
    g("C: unknown RP / other RP's credential / unknown ID -> NO_CREDENTIALS", c_no_credentials, ctx)
    g("C: credProtect 2: discoverable only with uv, allow list without uv", c_cred_protect_2, ctx)
    g("C: credProtect 3: uv needed even with an allow list", c_cred_protect_3, ctx)
    g("C: credBlob stored and returned at getAssertion (\"credBlob\": true)", c_cred_blob, ctx)
    g("C: credBlob over maxCredBlobLength: false at makeCredential, empty at getAssertion",
      c_cred_blob_too_long, ctx)
    g("C: largeBlobKey (0x05 at makeCredential = 0x07 at getAssertion, one per credential)",
      c_large_blob_key, ctx)
    g("C: largeBlobKey for a non-discoverable credential -> INVALID_OPTION", c_large_blob_key_nonrk, ctx)
    g("C: minPinLength accepted", c_min_pin_length, ctx)
    g("C: makeCredential without clientDataHash -> MISSING_PARAMETER", c_missing_cdh, ctx)

    for name, fn in (
            ("INIT on broadcast and on an allocated channel (resync)", r_init),
            ("wrong continuation sequence -> ERR_INVALID_SEQ", r_bad_seq),
            ("unknown CTAPHID command -> ERR_INVALID_CMD", r_bad_cmd),
            ("length beyond maxMsgSize -> ERR_INVALID_LEN", r_bad_len),
            ("unallocated channel, channel 0, broadcast PING -> ERR_INVALID_CHANNEL", r_bad_channel),
            ("init on channel B while A's message is half sent -> ERR_CHANNEL_BUSY to B", r_busy),
            ("stray continuation and idle CANCEL unanswered", r_stray),
            ("abandoned half message -> ERR_MSG_TIMEOUT, device free again", r_timeout),
            ("host disconnecting mid-message leaves the device free", r_disconnect),
            ("CBOR garbage -> status 0x12 INVALID_CBOR", r_cbor_garbage),
            ("unknown CTAP2 command byte -> status 0x01 INVALID_COMMAND", r_cbor_unknown),
            ("makeCredential without clientDataHash -> status 0x14 MISSING_PARAMETER", r_cbor_missing)):
        g(f"R: {name}; getInfo still answered", raw_check, ctx, fn)

    # python-fido2's Fido2Client uses a device's own user verification only
    # through a PIN/UV auth protocol (it builds a ClientPin for it), so group W
    # runs once the device lists one in getInfo (0x06): ClientPIN is not
    # served yet. Printed, not counted: a skipped group is no passed check.
    client_usable = bool(ctx.ctap.get_info().pin_uv_protocols)
    if client_usable:
        g("W: Fido2Client register (rk required, uv required) -> Fido2Server.register_complete", w_register, ctx)
        g("W: Fido2Client authenticate (allow list) -> Fido2Server.authenticate_complete",
          w_authenticate, ctx, False)
        g("W: Fido2Client authenticate (discoverable, user handle) -> Fido2Server", w_authenticate, ctx, True)
        g("W: Fido2Client credProtect + credBlob / getCredBlob extensions", w_extensions, ctx)
    else:
        print("skip  W: Fido2Client + Fido2Server need a PIN/UV auth protocol in getInfo, which the device does not offer yet")

    # A failed stop is reported; the process is gone either way (killed if it
    # did not exit), and a stale socket file is for the next start to replace.
    g("S: SIGTERM with hosts connected: exit 0, socket removed", p_stop, ctx, "first stop")
    if not g("S: restarted on the same --state", s_restart, ctx):
        return
    g("S: credentials from before assert with a higher counter", s_old_credential, ctx)
    g("S: discoverable credentials and credBlob survive", s_discoverable, ctx)
    if client_usable:
        g("S: Fido2Client / Fido2Server authenticate after the restart", w_authenticate, ctx, True)

    g("X: reset -> NO_CREDENTIALS for everything made before; new credential works", x_reset, ctx)
    g("X: SIGTERM: exit 0, socket removed", p_stop, ctx, "second stop")
    if not g("X: restarted again", s_restart, ctx):
        return
    g("X: the reset holds after a restart", x_after_restart, ctx)
    g("X: final SIGTERM: exit 0, socket removed", p_stop, ctx, "final stop")


def main():
    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        checks.fail(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        return checks.summary()
    with tempfile.TemporaryDirectory(prefix="tm-ctap-", dir="/tmp") as root:
        ctx = Ctx(root)
        try:
            run(ctx)
        finally:
            ctx.close_all()
            if ctx.device.proc is not None:
                if ctx.device.proc.poll() is None:
                    checks.fail("the device was still running at the end: killed")
                ctx.device.kill()
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
