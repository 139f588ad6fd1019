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
stopped here (a temporary folder holds its state and its socket); the groups
from N on each start a fresh device of their own (a subfolder, its own
--state, and --no-builtin-uv / --always-uv where said); they need the first
device to list a PIN/UV auth protocol in getInfo (0x06), and each counts as a
failure when it does not.
Section numbers are CTAP 2.1's.

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
   FIDO_2_0 and FIDO_2_1 and no U2F_V2, 16-byte AAGUID, algorithms ES256 and
   EdDSA, 1024 <= maxMsgSize <= 7609, maxCredBlobLength >= 32; with ClientPIN:
   extensions exactly credBlob/credProtect/hmac-secret/largeBlobKey/
   minPinLength, options exactly rk/up/uv/pinUvAuthToken/credMgmt/
   makeCredUvNotRqd true, plat/clientPin false, pinUvAuthProtocols [2, 1],
   minPINLength (0x0D) 4; before it: options rk/up/uv true, plat false, no
   clientPin/pinUvAuthToken, the four extensions without hmac-secret); selection;
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
W  (needs getInfo to list a PIN/UV auth protocol, which python-fido2's
   Fido2Client needs to use the device's user verification; a failure when
   it does not)
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

Each group below starts with "a fresh device starts" (a check); a device
that does not exit 0 on the SIGTERM at the group's end is a failure.
N2, N1  ClientPIN (0x06) through python-fido2's ClientPin, once with PIN/UV
   auth protocol 2 (PIN "1234") and once with 1 (PIN "ünï€": 4 code points
   in 8 bytes), each on a fresh --no-builtin-uv device: getInfo (no uv,
   clientPin false), getPINRetries 8, getKeyAgreement a P-256 COSE key, the
   same twice; before a PIN: a zero-length pinUvAuthParam -> PIN_NOT_SET at
   makeCredential and getAssertion (§6.1.2, §6.2.2 step 1), no token for any
   PIN, retries untouched; getPinUvAuthTokenUsingUvWithPermissions refused
   and uv=true -> INVALID_OPTION (no built-in UV, §6.1.2 step 5, §6.2.2 step
   4); setPIN of 3 code points in 6 bytes and of 64 bytes ->
   PIN_POLICY_VIOLATION, with a wrong pinUvAuthParam -> PIN_AUTH_INVALID;
   setPIN -> clientPin true, and again -> PIN_AUTH_INVALID (§6.5.5.5);
   getPinToken (0x05) tokens usable for makeCredential and getAssertion (UV
   set); getPinUvAuthTokenUsingPinWithPermissions: permissions 0 ->
   INVALID_PARAMETER, be / lbw / acfg -> UNAUTHORIZED_PERMISSION (no PIN try
   counted), mc / ga / cm served and usable (cm: getCredsMetadata); a token
   without mc or ga -> PIN_AUTH_INVALID; a token bound to an rpId ->
   PIN_AUTH_INVALID for another RP; a getAssertion up=false keeps the token's
   permissions (UV set, UP clear) and binds an unbound token to its RP
   (§6.2.2 steps 6.1, 9); a wrong pinUvAuthParam -> PIN_AUTH_INVALID,
   pinUvAuthProtocol 3 -> INVALID_PARAMETER, none -> MISSING_PARAMETER, a
   zero-length one -> PIN_INVALID, the token still good after them; mc / ga
   used up by one makeCredential / getAssertion, a new token works; with a
   PIN and no token: a non-discoverable makeCredential works (UV clear,
   makeCredUvNotRqd), a discoverable one -> PUAT_REQUIRED, getAssertion works
   (UV clear, user id only); changePIN: tokens from before and the old PIN
   refused, the new PIN works, a wrong current PIN -> PIN_INVALID, a 64-byte
   new PIN -> PIN_POLICY_VIOLATION; a wrong PIN -> PIN_INVALID, retries 7, a
   new key agreement key, the right PIN -> 8, a right PIN ends a run of
   mismatches; retries survive a restart on the same --state; 3 wrong PINs in
   a row -> PIN_AUTH_BLOCKED, then the right PIN (0x09 and 0x05), changePIN
   and a wrong PIN -> PIN_AUTH_BLOCKED without counting, getPINRetries still
   answers; a restart (power cycle) lifts it; retries down to 0 ->
   PIN_BLOCKED, the right PIN and changePIN too, also after one more restart;
   reset: clientPin false, retries 8, credentials gone, zero-length
   pinUvAuthParam -> PIN_NOT_SET, a new PIN and its token work.
U  built-in user verification (a fresh device, no flags): getInfo, getUVRetries
   > 0 with both protocols, getPINRetries 8;
   getPinUvAuthTokenUsingUvWithPermissions with protocol 2 and with 1:
   permissions 0 / be / lbw / acfg
   refused, an RP-bound mc token refused for another RP, mc / ga tokens set UV,
   a cm token reads getCredsMetadata; no PIN: a discoverable makeCredential
   without uv or a token -> OPERATION_DENIED (§6.1.2 step 7: protected by
   built-in UV, clientPin not true), with uv=true it works; PIN set: getInfo
   clientPin true and uv true, the same request -> PUAT_REQUIRED, uv=true, a
   PIN token and a UV token still work.
V  --refuse-uv (a sensor that fails every user): getPinUvAuthTokenUsingUv ->
   UV_INVALID and makeCredential uv=true -> OPERATION_DENIED, each spending one
   of getUVRetries' 8; the count survives a restart; at 0 both -> UV_BLOCKED
   without asking; a PIN token gives the 8 back.
A  --always-uv (getInfo alwaysUv true, makeCredUvNotRqd false): with built-in
   UV, makeCredential and getAssertion without uv or a token verify the user
   (UV set, §6.1.2 step 6, §6.2.2 step 5), getAssertion up=false stays
   without UV; with --no-builtin-uv too: no PIN -> PUAT_REQUIRED for both,
   PIN set -> PUAT_REQUIRED without a token, UV set with one.
M  authenticatorCredentialManagement (0x0A) through python-fido2's
   CredentialManagement, on a fresh --no-builtin-uv device with a PIN: no
   discoverable credential: getCredsMetadata 0 and a remaining count,
   enumerateRPsBegin / enumerateCredentialsBegin -> NO_CREDENTIALS; no
   pinUvAuthParam -> PUAT_REQUIRED, a wrong one or a token without cm ->
   PIN_AUTH_INVALID, a protocol 1 token works; 3 discoverable credentials (2
   RPs; credProtect 2 + largeBlobKey, EdDSA) and a non-discoverable one:
   existing 3, remaining 3 fewer; enumerateRPs: 2, rp.id, rpIDHash, totalRPs,
   then NOT_ALLOWED; enumerateCredentials: user (id, name, displayName),
   credentialID, publicKey, totalCredentials, credProtect 2 (1 or absent
   otherwise), largeBlobKey = makeCredential's (absent otherwise), then
   NOT_ALLOWED, NO_CREDENTIALS for an RP without any; each enumerated
   publicKey verifies its credential's assertion; a cm token bound to an RP
   (§6.8): that RP's credentials only (another RP's enumeration and delete,
   getCredsMetadata, enumerateRPsBegin -> PIN_AUTH_INVALID);
   updateUserInformation seen in enumeration and in getAssertion's user
   (two accounts, UV); deleteCredential: NO_CREDENTIALS for it (allow list
   and discoverable), existing 2, remaining 1 more, 1 RP, deleting it again
   -> NO_CREDENTIALS.
E  hmac-secret (§12.5) through python-fido2's HmacSecretExtension on a fresh
   device: makeCredential hmac-secret true (hmacCreateSecret); 32-byte
   outputs (48 with protocol 2's IV), stable per salt, another for another
   salt; two salts give each salt's own output; with UV (uv=true, or a UV
   token) other outputs, the same either way; protocol 1 gives protocol 2's
   outputs; Fido2Client's prf (enabled; its results = hmac-secret of the PRF
   salts with UV); prf with eval at registration through hmac-secret-mc
   (CTAP 2.2 §12.7): results at creation = getAssertion's for the same salts;
   hmacCreateSecret / hmacGetSecret likewise.
W  Fido2Client + Fido2Server with a PIN (a fresh --no-builtin-uv device, a
   UserInteraction that types it): register (rk and uv required) asks once
   for mc on example.org; authenticate with an allow list and discoverably
   asks for ga; a non-discoverable registration with uv discouraged asks
   nothing (UV clear); a discoverable one with uv discouraged gets
   PUAT_REQUIRED, Fido2Client asks and retries (UV set); a wrong PIN typed ->
   ClientError caused by PIN_INVALID, retries 7, then the right one -> 8.
K  `tokenmint fido2 key … --socket S` (the CLI a user points at a key) on a
   fresh --no-builtin-uv device, each result checked through python-fido2:
   `key info` JSON = getInfo; `key pin set` (PIN on standard input) then
   python-fido2 gets a token with it; `key pin change` with a wrong current
   PIN exits 2 (pinInvalid) and `key pin retries` says 7; with the right one
   the old PIN is PIN_INVALID for python-fido2 and the new one works;
   `key credentials` lists python-fido2's discoverable credential (RP, ID,
   user ID and name); `key delete ID` removes it (NO_CREDENTIALS after, and
   for a second delete); `key reset` needs --yes, then clientPin is false.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed`; exits 1 on any failure.
"""
import base64
import hashlib
import json
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

from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.attestation import Attestation, AttestationType, InvalidSignature
from fido2.client import ClientError, DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.cose import CoseKey, EdDSA, ES256
from fido2.ctap import CtapError
from fido2.ctap2 import ClientPin, CredentialManagement, Ctap2, Info, PinProtocolV1, PinProtocolV2
from fido2.ctap2.extensions import HmacSecretExtension
from fido2.hid import CAPABILITY, CTAPHID, ConnectionFailure
from fido2.server import Fido2Server
from fido2.webauthn import (
    AttestationObject,
    AuthenticatorData,
    PublicKeyCredentialCreationOptions,
    PublicKeyCredentialDescriptor,
    PublicKeyCredentialParameters,
    PublicKeyCredentialRequestOptions,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialType,
    PublicKeyCredentialUserEntity,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ctaphid_socket import REPORT, SocketConnection, descriptor, open_device  # noqa: F401
from tmcli import TOKENMINT, Checks, Fail, expect

checks = Checks()
# python-fido2 logs a warning each time it retries on ERR_CHANNEL_BUSY (the
# parallel-hosts check provokes that on purpose).
logging.getLogger("fido2.hid").setLevel(logging.ERROR)

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


# ---- transport: python-fido2's CtapHidDevice over the socket (ctaphid_socket.py) ----

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
    """`tokenmint fido2 device` in a folder of its own, with extra flags
    (--no-builtin-uv, --always-uv) if given."""

    def __init__(self, root, flags=()):
        self.flags = list(flags)
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
                        [TOKENMINT, "fido2", "device", "--socket", self.socket_path, "--state", self.state,
                         *self.flags],
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
            self.proc = None
            problem = f"no 'listening on' line (exit {code}); stderr: {self.stderr_tail()}"
            if code == 2 and "Usage:" in self.stderr_tail():
                break  # its arguments were refused (an unknown flag): a retry would say the same
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
        self.root = root
        self.device = DeviceProcess(root)
        self.pin_capable = None  # getInfo lists a PIN/UV auth protocol (None: never asked)
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
    """The getInfo of the device with ClientPIN when it lists a PIN/UV auth
    protocol, else the one from before (no clientPin, no hmac-secret)."""
    info = ctx.ctap.get_info()
    ctx.info = info
    if info.pin_uv_protocols:
        check_pin_info(ctx.ctap, builtin_uv=True)
    else:
        check_info_before_pin(info)
    expect("U2F_V2" not in info.versions, "U2F_V2 listed, but CTAPHID_MSG is not served (NMSG)")
    expect(len(bytes(info.aaguid)) == 16, f"AAGUID of {len(bytes(info.aaguid))} bytes")


def check_info_before_pin(info):
    """getInfo of the device before ClientPIN was served."""
    expect({"FIDO_2_0", "FIDO_2_1"} <= set(info.versions), f"versions {info.versions}")
    opts = info.options
    for name in ("rk", "up", "uv"):
        expect(opts.get(name) is True, f"option {name} is {opts.get(name)!r}, expected true")
    expect(opts.get("plat") is False, f"option plat is {opts.get('plat')!r}, expected false")
    for name in ("clientPin", "pinUvAuthToken"):
        expect(name not in opts, f"option {name} listed without a PIN/UV auth protocol")
    check_algorithms_and_sizes(info)
    want = ["credBlob", "credProtect", "largeBlobKey", "minPinLength"]
    expect(sorted(info.extensions) == want and len(info.extensions) == 4,
           f"extensions {info.extensions}, expected {want} in any order")


def check_algorithms_and_sizes(info):
    algs = [a.get("alg") for a in info.algorithms]
    expect(-7 in algs and -8 in algs, f"algorithms {info.algorithms}")
    expect(all(a.get("type") == "public-key" for a in info.algorithms), f"algorithms {info.algorithms}")
    expect(1024 <= info.max_msg_size <= LARGEST_MESSAGE,
           f"maxMsgSize {info.max_msg_size}, expected 1024..{LARGEST_MESSAGE}")
    expect(info.max_cred_blob_length >= 32, f"maxCredBlobLength {info.max_cred_blob_length}, at least 32")


def check_pin_info(ctap, builtin_uv=True, always_uv=False, client_pin=False):
    """getInfo of the device with ClientPIN, read raw (python-fido2's Info
    fills in minPINLength 4 when it is absent): versions, the five
    extensions, the exact option set for the flags the device runs with,
    pinUvAuthProtocols [2, 1] (0x06), minPINLength 4 (0x0D)."""
    raw = ctap.send_cbor(Ctap2.CMD.GET_INFO)
    info = Info.from_dict(raw)
    problems = []
    if not {"FIDO_2_0", "FIDO_2_1"} <= set(info.versions):
        problems.append(f"versions {info.versions}")
    if sorted(info.extensions) != NEW_EXTENSIONS or len(info.extensions) != len(NEW_EXTENSIONS):
        problems.append(f"extensions {info.extensions}, expected {NEW_EXTENSIONS} in any order")
    opts = dict(info.options)
    uv = opts.pop("uv", None)
    if builtin_uv and uv is not True:
        problems.append(f"option uv {uv!r}, expected true (built-in user verification)")
    if not builtin_uv and uv not in (None, False):
        problems.append(f"option uv {uv!r} with {NO_BUILTIN_UV}, expected absent or false")
    want = {"rk": True, "up": True, "plat": False, "clientPin": client_pin, "pinUvAuthToken": True,
            "credMgmt": True, "makeCredUvNotRqd": not always_uv}
    if always_uv:
        want["alwaysUv"] = True
    if opts != want:
        problems.append(f"options (uv aside) {opts}, expected exactly {want}")
    if raw.get(0x06) != [2, 1]:
        problems.append(f"pinUvAuthProtocols (0x06) {raw.get(0x06)!r}, expected [2, 1]")
    if raw.get(0x0D) != 4:
        problems.append(f"minPINLength (0x0D) {raw.get(0x0D)!r}, expected 4")
    expect(not problems, "; ".join(problems))
    check_algorithms_and_sizes(info)
    return info


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
    web_authenticate(web_client(ctx), ctx.web, discoverable)


def web_authenticate(client, web, discoverable, extensions=None):
    """Fido2Server.authenticate_begin (user verification required) ->
    client.get_assertion -> authenticate_complete for the credential in
    `web`; returns the response."""
    expect("cred" in web, "needs the Fido2Client registration")
    server = web_server()
    creds = [web["cred"]]
    options, state = server.authenticate_begin(None if discoverable else creds,
                                               user_verification=UserVerificationRequirement.REQUIRED,
                                               extensions=extensions)
    selection = client.get_assertion(options.public_key)
    responses = [selection.get_response(i) for i in range(len(selection.get_assertions()))]
    mine = [r for r in responses if r.raw_id == web["cred"].credential_id]
    expect(len(mine) == 1, f"{len(responses)} responses, {len(mine)} for the registered credential")
    resp = mine[0]
    got = server.authenticate_complete(state, creds, resp)
    expect(got.credential_id == web["cred"].credential_id, "authenticate_complete picked another credential")
    ad = resp.response.authenticator_data
    expect(ad.is_user_verified(), "UV not set")
    expect(ad.counter > web["counter"], f"signCount {ad.counter} not above {web['counter']}")
    web["counter"] = ad.counter
    if discoverable:
        expect(resp.response.user_handle == web["user"].id,
               f"user handle {resp.response.user_handle!r}, expected {web['user'].id.hex()}")
    return resp


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


# ---- devices of their own: ClientPIN, tokens, credential management, hmac-secret ----

P = ClientPin.PERMISSION
MC, GA, CM = P.MAKE_CREDENTIAL, P.GET_ASSERTION, P.CREDENTIAL_MGMT
BE, LBW, ACFG = P.BIO_ENROLL, P.LARGE_BLOB_WRITE, P.AUTHENTICATOR_CFG
PROTOCOLS = {2: PinProtocolV2, 1: PinProtocolV1}
CMD = ClientPin.CMD
CRED = CredentialManagement.RESULT
NO_BUILTIN_UV, ALWAYS_UV = "--no-builtin-uv", "--always-uv"
NEW_EXTENSIONS = ["credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "largeBlobKey", "minPinLength"]
WRONG_PIN = "not-the-pin"
HMAC = HmacSecretExtension(allow_hmac_secret=True)


class Side:
    """A `fido2 device` of one group's own: a fresh --state, its flags, one
    host. `pin` is the PIN set on it (None before), `proto` the PIN/UV auth
    protocol its checks use."""

    def __init__(self, root, name, flags=(), proto=2):
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        self.device = DeviceProcess(folder, flags)
        self.dev = self.ctap = None
        self.proto = PROTOCOLS[proto]()
        self.pin = None
        self.creds = {}
        self.web = {}
        self.notes = {}

    def start(self):
        line = self.device.start()
        expect(line == f"listening on {self.device.socket_path}",
               f"first stdout line {line!r}; stderr: {self.device.stderr_tail()}")
        self.dev = open_device(self.device.socket_path)
        self.ctap = Ctap2(self.dev)

    def close(self):
        if self.dev is not None:
            try:
                self.dev.close()
            except Exception:
                pass
        self.dev = self.ctap = None

    def restart(self):
        """A power cycle: SIGTERM, then the same --state again."""
        self.close()
        code = self.device.stop()
        expect(code == 0, f"exit code {code} after SIGTERM; stderr: {self.device.stderr_tail()}")
        self.start()

    def finish(self):
        """Stops the device; returns a problem, or None (also when it is not
        running: a device that did not start or exited was reported then)."""
        self.close()
        if self.device.proc is None or self.device.proc.poll() is not None:
            self.device.proc = None
            return None
        code = self.device.stop()
        return None if code == 0 else f"exit code {code} after SIGTERM; stderr: {self.device.stderr_tail()}"

    def client_pin(self, proto=None):
        return ClientPin(self.ctap, proto or self.proto)

    def set_pin(self, pin):
        self.client_pin().set_pin(pin)
        self.pin = pin

    def token(self, permissions=MC | GA, rp_id=None, pin=None, proto=None):
        """getPinUvAuthTokenUsingPinWithPermissions (0x09)."""
        return self.client_pin(proto).get_pin_token(self.pin if pin is None else pin, permissions, rp_id)

    def wrong_pin(self):
        return self.token(MC | GA, pin=WRONG_PIN)

    def retries(self, proto=None):
        """(pinRetries, powerCycleState)"""
        return self.client_pin(proto).get_pin_retries()

    def key_agreement(self, proto=None):
        proto = proto or self.proto
        return self.ctap.client_pin(proto.VERSION, CMD.GET_KEY_AGREEMENT)[ClientPin.RESULT.KEY_AGREEMENT]

    def credman(self, permissions=CM, rp_id=None, proto=None):
        """CredentialManagement with a fresh token (a token also loses its
        permissions to any makeCredential or getAssertion with up)."""
        proto = proto or self.proto
        return CredentialManagement(self.ctap, proto, self.token(permissions, rp_id, proto=proto))


def refuse(code, what, fn, *args, **kwargs):
    """Runs fn, which must raise CtapError `code` (a code, a tuple of codes,
    or None for any); returns the code it raised."""
    try:
        fn(*args, **kwargs)
    except CtapError as e:
        if code is not None:
            codes = code if isinstance(code, tuple) else (code,)
            expect(e.code in codes, f"{what}: {err_name(e.code)}, expected "
                   + " or ".join(err_name(c) for c in codes))
        return e.code
    want = "an error" if code is None else " or ".join(
        err_name(c) for c in (code if isinstance(code, tuple) else (code,)))
    raise Fail(f"{what}: succeeded, expected {want}")


def expect_retries(side, n, what=""):
    got, power = side.retries()
    expect(got == n, f"{what + ': ' if what else ''}getPINRetries {got}, expected {n}")
    return power


def expect_flags(ad, up, uv, what):
    got = (bool(ad.flags & FLAG.UP), bool(ad.flags & FLAG.UV))
    expect(got == (up, uv), f"{what}: flags UP={got[0]} UV={got[1]}, expected UP={up} UV={uv}")


def mk(side, rp_id, *, uid=None, alg=-7, rk=False, uv=None, token=None, proto=None, extensions=None,
       name="user", **raw):
    """makeCredential on a side device, pinUvAuthParam from `token` (or
    pin_uv_param / pin_uv_protocol as given in raw); the attestation
    statement verified. Returns (response, credential)."""
    proto = proto or side.proto
    cdh = os.urandom(32)
    uid = uid or os.urandom(16)
    options = {"rk": True} if rk else {}
    if uv is not None:
        options["uv"] = uv
    kwargs = {}
    if token is not None:
        kwargs = {"pin_uv_param": proto.authenticate(token, cdh), "pin_uv_protocol": proto.VERSION}
    kwargs.update(raw)
    resp = side.ctap.make_credential(cdh, {"id": rp_id, "name": rp_id}, user(uid, name), [PARAMS[alg]],
                                     extensions=extensions, options=options or None, **kwargs)
    try:
        Attestation.for_type(resp.fmt)().verify(resp.att_stmt, resp.auth_data, cdh)
    except Exception as e:
        raise Fail(f"makeCredential for {rp_id}: fido2.attestation {resp.fmt} refused it: {type(e).__name__}: {e}")
    cd = resp.auth_data.credential_data
    cred = {"id": cd.credential_id, "key": cd.public_key, "rp": rp_id, "user": uid, "name": name,
            "counter": resp.auth_data.counter, "large_blob_key": resp.large_blob_key}
    return resp, cred


def ga(side, rp_id, cred=None, *, uv=None, up=None, token=None, proto=None, extensions=None, **raw):
    """getAssertion on a side device, with an allow list of `cred` if given
    (then the signature is verified with its key), pinUvAuthParam from
    `token` or raw. Returns (assertion, clientDataHash)."""
    proto = proto or side.proto
    cdh = os.urandom(32)
    options = {}
    if uv is not None:
        options["uv"] = uv
    if up is not None:
        options["up"] = up
    kwargs = {}
    if token is not None:
        kwargs = {"pin_uv_param": proto.authenticate(token, cdh), "pin_uv_protocol": proto.VERSION}
    kwargs.update(raw)
    a = side.ctap.get_assertion(rp_id, cdh, [desc(cred["id"])] if cred else None, extensions=extensions,
                                options=options or None, **kwargs)
    if cred is not None:
        expect(a.credential["id"] == cred["id"], f"getAssertion for {rp_id} names another credential")
        try:
            a.verify(cdh, cred["key"])
        except Exception as e:
            raise Fail(f"getAssertion for {rp_id}: the signature does not verify: {type(e).__name__} {e}")
    return a, cdh


def check_key_agreement(key):
    expect(key.get(1) == 2 and key.get(3) == -25 and key.get(-1) == 1,
           f"keyAgreement kty/alg/crv {key.get(1)}/{key.get(3)}/{key.get(-1)}, expected 2/-25/1 (EC2, "
           "ECDH-ES+HKDF-256, P-256)")
    x, y = key.get(-2), key.get(-3)
    expect(isinstance(x, bytes) and isinstance(y, bytes) and len(x) == len(y) == 32, "keyAgreement x/y not 32 bytes")
    try:
        ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()).public_key()
    except ValueError as e:
        raise Fail(f"keyAgreement is not a P-256 point: {e}")


def raw_set_pin(side, pin_bytes, tamper=False):
    """setPIN built here (python-fido2's set_pin refuses PINs under 4
    characters before sending them)."""
    key_agreement, shared = side.client_pin()._get_shared_secret()
    enc = side.proto.encrypt(shared, pin_bytes.ljust(64, b"\0"))
    param = side.proto.authenticate(shared, enc)
    if tamper:
        param = bytes([param[0] ^ 0x01]) + param[1:]
    side.ctap.client_pin(side.proto.VERSION, CMD.SET_PIN, key_agreement=key_agreement, new_pin_enc=enc,
                         pin_uv_param=param)


def client_pin_option(side):
    return side.ctap.get_info().options.get("clientPin")


def side_group(root, letter, name, flags, steps, proto=2):
    """Starts a fresh device (its own --state, `flags`) and runs `steps`, each
    (title, fn, *args) called as fn(side, *args) and counted as one check."""
    side = Side(root, name, flags, proto)
    shown = " ".join(flags) if flags else "no flags"
    try:
        if not checks.group(f"{letter}: a fresh device ({shown}) starts", side.start):
            return
        for title, fn, *args in steps:
            checks.group(f"{letter}: {title}", fn, side, *args)
    finally:
        try:
            problem = side.finish()
        except Exception as e:
            problem = f"{type(e).__name__}: {e}"
        if problem:
            checks.fail(f"{letter}: stopping the device ({shown}): {problem}")
        side.device.kill()


# ---- N: ClientPIN, per PIN/UV auth protocol (a device without built-in UV) ----

def n_fresh(side):
    check_pin_info(side.ctap, builtin_uv=False, client_pin=False)
    power = expect_retries(side, 8, "fresh")
    expect(not power, f"powerCycleState {power!r} on a fresh device")
    first, again = side.key_agreement(), side.key_agreement()
    check_key_agreement(first)
    expect(first == again, "two getKeyAgreement calls gave two keys (CTAP 2.1 §6.5.6: initialize() at power-up, "
           "regenerate() on a PIN mismatch)")


def n_no_pin(side):
    v = side.proto.VERSION
    refuse(ERR.PIN_NOT_SET, "makeCredential with a zero-length pinUvAuthParam (§6.1.2 step 1)",
           mk, side, "nopin.example.com", pin_uv_param=b"", pin_uv_protocol=v)
    refuse(ERR.PIN_NOT_SET, "getAssertion with a zero-length pinUvAuthParam (§6.2.2 step 1)",
           ga, side, "nopin.example.com", pin_uv_param=b"", pin_uv_protocol=v)
    refuse(None, "getPinUvAuthTokenUsingPinWithPermissions with no PIN set", side.token, MC | GA, pin="1234")
    refuse(None, "getPinToken (0x05) with no PIN set", side.client_pin().get_pin_token, "1234")
    expect_retries(side, 8, "after the token requests without a PIN")


def n_no_builtin_uv(side):
    refuse(None, "getPinUvAuthTokenUsingUvWithPermissions without built-in UV",
           side.client_pin().get_uv_token, MC, "nouv.example.com")
    refuse(ERR.INVALID_OPTION, "makeCredential uv=true without built-in UV (§6.1.2 step 5)",
           mk, side, "nouv.example.com", uv=True)
    refuse(ERR.INVALID_OPTION, "getAssertion uv=true without built-in UV (§6.2.2 step 4)",
           ga, side, "nouv.example.com", uv=True)


def n_set_pin_policy(side, pin):
    refuse(ERR.PIN_POLICY_VIOLATION, "setPIN 'ééé' (3 code points in 6 bytes)", raw_set_pin, side, "ééé".encode())
    refuse(ERR.PIN_POLICY_VIOLATION, "setPIN of 64 bytes", raw_set_pin, side, b"7" * 64)
    refuse(ERR.PIN_AUTH_INVALID, "setPIN with a wrong pinUvAuthParam", raw_set_pin, side, pin.encode(), tamper=True)
    expect(client_pin_option(side) is False, f"clientPin {client_pin_option(side)!r} after refused setPINs")
    expect_retries(side, 8)


def n_set_pin(side, pin):
    side.set_pin(pin)
    expect(client_pin_option(side) is True, f"clientPin {client_pin_option(side)!r} after setPIN")
    expect_retries(side, 8, "after setPIN")
    # CTAP 2.1 §6.5.5.5: "If a PIN has already been set, authenticator
    # returns CTAP2_ERR_PIN_AUTH_INVALID error."
    refuse(ERR.PIN_AUTH_INVALID, "setPIN while a PIN is set (§6.5.5.5)", side.client_pin().set_pin, "55555")
    side.token(GA)  # python-fido2 checks its length (32 bytes; 16 or 32 with protocol 1)


def n_legacy_token(side):
    token = side.client_pin().get_pin_token(side.pin)  # no permissions: getPinToken (0x05), mc+ga
    resp, cred = mk(side, "legacy.example.com", rk=True, token=token)
    expect_flags(resp.auth_data, True, True, "makeCredential with a getPinToken token")
    side.creds["legacy"] = cred
    token = side.client_pin().get_pin_token(side.pin)
    a, _ = ga(side, "legacy.example.com", cred, token=token)
    expect_flags(a.auth_data, True, True, "getAssertion with a getPinToken token")


def n_permissions_refused(side):
    refuse(ERR.INVALID_PARAMETER, "permissions 0", side.token, P(0))
    for perm, name in ((BE, "be"), (LBW, "lbw"), (ACFG, "acfg")):
        refuse(ERR.UNAUTHORIZED_PERMISSION, f"permission {name} (0x{int(perm):02x})", side.token, perm)
    expect_retries(side, 8, "after the refused permissions (no PIN try counted)")


def n_permissions_served(side):
    resp, cred = mk(side, "perm.example.com", rk=True, token=side.token(MC), name="perm")
    expect_flags(resp.auth_data, True, True, "makeCredential with an mc token")
    side.creds["perm"] = cred
    a, _ = ga(side, "perm.example.com", cred, token=side.token(GA))
    expect_flags(a.auth_data, True, True, "getAssertion with a ga token")
    count = side.credman().get_metadata()[CRED.EXISTING_CRED_COUNT]
    expect(count == 2, f"getCredsMetadata with a cm token: {count} discoverable credentials, expected 2")


def n_permission_missing(side):
    cred = side.creds["perm"]
    refuse(ERR.PIN_AUTH_INVALID, "makeCredential with a ga-only token",
           mk, side, "perm.example.com", token=side.token(GA))
    refuse(ERR.PIN_AUTH_INVALID, "getAssertion with an mc-only token",
           ga, side, "perm.example.com", cred, token=side.token(MC))
    token = side.token(CM)
    refuse(ERR.PIN_AUTH_INVALID, "makeCredential with a cm-only token", mk, side, "perm.example.com", token=token)
    refuse(ERR.PIN_AUTH_INVALID, "getAssertion with a cm-only token", ga, side, "perm.example.com", cred, token=token)


def n_rp_bound(side):
    token = side.token(MC | GA, "a.example.com")
    refuse(ERR.PIN_AUTH_INVALID, "makeCredential for b.example.com with a token for a.example.com",
           mk, side, "b.example.com", token=token)
    resp, cred_a = mk(side, "a.example.com", token=token)
    expect_flags(resp.auth_data, True, True, "makeCredential for the token's RP")
    _, cred_b = mk(side, "b.example.com", token=side.token(MC, "b.example.com"))
    side.creds["a"], side.creds["b"] = cred_a, cred_b
    token = side.token(GA, "a.example.com")
    refuse(ERR.PIN_AUTH_INVALID, "getAssertion for b.example.com with a token for a.example.com",
           ga, side, "b.example.com", cred_b, token=token)
    a, _ = ga(side, "a.example.com", cred_a, token=token)
    expect_flags(a.auth_data, True, True, "getAssertion for the token's RP")


def n_up_false(side):
    """CTAP 2.1 §6.2.2: a token without an RP ID takes the rpId of its first
    use (step 6.1); permissions are cleared only when up is true (step 9).
    python-fido2's Fido2Client relies on both (an up=false probe of the
    allow list, then the real getAssertion with the same token)."""
    cred_a, cred_b = side.creds["a"], side.creds["b"]
    token = side.token(GA)
    a, _ = ga(side, "a.example.com", cred_a, up=False, token=token)
    expect_flags(a.auth_data, False, True, "getAssertion up=false with a token")
    refuse(ERR.PIN_AUTH_INVALID, "the token, bound to a.example.com by its first use, for b.example.com",
           ga, side, "b.example.com", cred_b, token=token)
    a, _ = ga(side, "a.example.com", cred_a, token=token)
    expect_flags(a.auth_data, True, True, "getAssertion with the token after its up=false use")
    refuse(ERR.PIN_AUTH_INVALID, "the token once more after an up=true getAssertion",
           ga, side, "a.example.com", cred_a, token=token)


def n_bad_param(side):
    cred, v = side.creds["a"], side.proto.VERSION
    token = side.token(MC | GA)
    bogus = os.urandom(len(side.proto.authenticate(token, b"x")))
    for what, call in (("makeCredential", lambda **kw: mk(side, "a.example.com", **kw)),
                       ("getAssertion", lambda **kw: ga(side, "a.example.com", cred, **kw))):
        refuse(ERR.PIN_AUTH_INVALID, f"{what} with a wrong pinUvAuthParam", call, pin_uv_param=bogus, pin_uv_protocol=v)
        refuse(ERR.INVALID_PARAMETER, f"{what} with pinUvAuthProtocol 3", call, pin_uv_param=bogus, pin_uv_protocol=3)
        refuse(ERR.MISSING_PARAMETER, f"{what} with a pinUvAuthParam and no pinUvAuthProtocol", call,
               pin_uv_param=bogus)
        refuse(ERR.PIN_INVALID, f"{what} with a zero-length pinUvAuthParam, PIN set", call, pin_uv_param=b"",
               pin_uv_protocol=v)
    resp, _ = mk(side, "a.example.com", token=token)
    expect_flags(resp.auth_data, True, True, "makeCredential with the token after the refused requests")
    expect_retries(side, 8, "after the refused requests (none is a PIN try)")


def n_used_up(side):
    cred = side.creds["a"]
    token = side.token(MC | GA)
    mk(side, "a.example.com", token=token)
    refuse(ERR.PIN_AUTH_INVALID, "getAssertion with an mc+ga token a makeCredential used",
           ga, side, "a.example.com", cred, token=token)
    refuse(ERR.PIN_AUTH_INVALID, "a second makeCredential with it", mk, side, "a.example.com", token=token)
    token = side.token(GA)
    ga(side, "a.example.com", cred, token=token)
    refuse(ERR.PIN_AUTH_INVALID, "a second getAssertion with the same token", ga, side, "a.example.com", cred,
           token=token)
    a, _ = ga(side, "a.example.com", cred, token=side.token(GA))
    expect_flags(a.auth_data, True, True, "getAssertion with a new token")


def n_no_token(side):
    resp, cred = mk(side, "plain.example.com")
    expect_flags(resp.auth_data, True, False, "non-discoverable makeCredential without a token, PIN set")
    refuse(ERR.PUAT_REQUIRED, "discoverable makeCredential without a token, PIN set (§6.1.2 step 7)",
           mk, side, "plain.example.com", rk=True)
    a, _ = ga(side, "plain.example.com", cred)
    expect_flags(a.auth_data, True, False, "getAssertion without a token, PIN set")
    perm = side.creds["perm"]
    a, cdh = ga(side, "perm.example.com")
    expect(a.credential["id"] == perm["id"], "discoverable getAssertion without a token: another credential")
    a.verify(cdh, perm["key"])
    expect_flags(a.auth_data, True, False, "discoverable getAssertion without a token")
    # §6.2.2, user (0x04): "User identifiable information (name,
    # DisplayName, icon) ... MUST NOT be returned if user verification is
    # not done by the authenticator."
    expect(a.user is not None and set(a.user) == {"id"}, f"user {a.user} without user verification, expected the id only")


def n_change_pin(side, new_pin):
    old = side.pin
    before = side.token(MC)
    side.client_pin().change_pin(old, new_pin)
    refuse(ERR.PIN_AUTH_INVALID, "a token from before changePIN (§6.5.5.6: every token reset)",
           mk, side, "a.example.com", token=before)
    refuse(ERR.PIN_INVALID, "the old PIN", side.token, MC | GA, pin=old)
    expect_retries(side, 7, "after the old PIN")
    side.pin = new_pin
    side.token(MC | GA)
    expect_retries(side, 8, "after the new PIN")
    refuse(ERR.PIN_INVALID, "changePIN with a wrong current PIN", side.client_pin().change_pin, WRONG_PIN, "whatever1")
    expect_retries(side, 7, "after changePIN with a wrong current PIN")
    refuse(ERR.PIN_POLICY_VIOLATION, "changePIN to 64 bytes", side.client_pin().change_pin, new_pin, "8" * 64)
    expect_retries(side, 8, "after changePIN with the right current PIN")
    resp, _ = mk(side, "a.example.com", token=side.token(MC))
    expect_flags(resp.auth_data, True, True, "makeCredential with a token of the new PIN")


def n_wrong_pin(side):
    before = side.key_agreement()
    refuse(ERR.PIN_INVALID, "a wrong PIN", side.wrong_pin)
    expect_retries(side, 7, "after a wrong PIN")
    after = side.key_agreement()
    check_key_agreement(after)
    expect(after != before, "the key agreement key is the same after a wrong PIN (§6.5.5.7: regenerate())")
    side.token(MC | GA)
    expect_retries(side, 8, "after the right PIN")
    refuse(ERR.PIN_INVALID, "a wrong PIN", side.wrong_pin)
    side.token(MC | GA)
    refuse(ERR.PIN_INVALID, "a wrong PIN after a right one", side.wrong_pin)
    refuse(ERR.PIN_INVALID, "the 2nd wrong PIN in a row (a right PIN ended the earlier run)", side.wrong_pin)
    expect_retries(side, 6, "after two wrong PINs")


def n_durable(side):
    side.restart()
    expect_retries(side, 6, "after a restart on the same --state")
    side.token(MC | GA)
    expect_retries(side, 8, "after the right PIN following the restart")


def n_auth_blocked(side):
    for i, code in enumerate((ERR.PIN_INVALID, ERR.PIN_INVALID, ERR.PIN_AUTH_BLOCKED)):
        refuse(code, f"wrong PIN {i + 1} of 3 in a row", side.wrong_pin)
    power = expect_retries(side, 5, "after 3 wrong PINs")
    expect(power in (None, True), f"powerCycleState {power!r} while a power cycle is needed")
    refuse(ERR.PIN_AUTH_BLOCKED, "the right PIN (0x09)", side.token, MC | GA)
    refuse(ERR.PIN_AUTH_BLOCKED, "the right PIN (getPinToken 0x05)", side.client_pin().get_pin_token, side.pin)
    refuse(ERR.PIN_AUTH_BLOCKED, "changePIN with the right PIN", side.client_pin().change_pin, side.pin, "whatever2")
    refuse(ERR.PIN_AUTH_BLOCKED, "a 4th wrong PIN", side.wrong_pin)
    expect_retries(side, 5, "after the blocked attempts (none counted)")


def n_pin_blocked(side):
    side.restart()
    for left, code in ((4, ERR.PIN_INVALID), (3, ERR.PIN_INVALID), (2, ERR.PIN_AUTH_BLOCKED)):
        refuse(code, f"a wrong PIN after the power cycle ({left} left)", side.wrong_pin)
    side.restart()
    refuse(ERR.PIN_INVALID, "a wrong PIN (1 left)", side.wrong_pin)
    refuse(ERR.PIN_BLOCKED, "a wrong PIN (0 left)", side.wrong_pin)
    expect_retries(side, 0, "blocked")
    refuse(ERR.PIN_BLOCKED, "the right PIN once blocked", side.token, MC | GA)
    refuse(ERR.PIN_BLOCKED, "changePIN once blocked", side.client_pin().change_pin, side.pin, "whatever3")
    side.restart()
    refuse(ERR.PIN_BLOCKED, "the right PIN after one more restart", side.token, MC | GA)
    expect_retries(side, 0, "blocked, after a restart")


def n_reset(side, pin):
    side.ctap.reset()  # n_pin_blocked restarted it just now: within 10 s of power-up
    expect(client_pin_option(side) is False, f"clientPin {client_pin_option(side)!r} after reset")
    expect_retries(side, 8, "after reset")
    refuse(ERR.NO_CREDENTIALS, "a credential from before the reset", ga, side, "a.example.com", side.creds["a"])
    refuse(ERR.PIN_NOT_SET, "zero-length pinUvAuthParam after reset", mk, side, "a.example.com",
           pin_uv_param=b"", pin_uv_protocol=side.proto.VERSION)
    side.set_pin(pin)
    resp, _ = mk(side, "a.example.com", rk=True, token=side.token(MC))
    expect_flags(resp.auth_data, True, True, "makeCredential with a token after reset and a new PIN")


def n_steps(pin, new_pin):
    return [
        ("getInfo without built-in UV (clientPin false, no uv); getPINRetries 8; getKeyAgreement a P-256 key, "
         "the same twice", n_fresh),
        ("no PIN: zero-length pinUvAuthParam -> PIN_NOT_SET (makeCredential, getAssertion); no token", n_no_pin),
        ("no built-in UV: getPinUvAuthTokenUsingUvWithPermissions refused; uv=true -> INVALID_OPTION",
         n_no_builtin_uv),
        ("setPIN: 3 code points / 64 bytes -> PIN_POLICY_VIOLATION; wrong pinUvAuthParam -> PIN_AUTH_INVALID",
         n_set_pin_policy, pin),
        (f"setPIN {pin!r} ({len(pin)} code points, {len(pin.encode())} bytes): clientPin true; setPIN again -> "
         "PIN_AUTH_INVALID", n_set_pin, pin),
        ("getPinToken (0x05): a token with mc and ga (UV set)", n_legacy_token),
        ("permissions 0 -> INVALID_PARAMETER; be, lbw, acfg -> UNAUTHORIZED_PERMISSION", n_permissions_refused),
        ("mc, ga and cm tokens served and usable (UV set)", n_permissions_served),
        ("a token without mc / ga -> PIN_AUTH_INVALID", n_permission_missing),
        ("a token bound to an rpId -> PIN_AUTH_INVALID for another RP", n_rp_bound),
        ("getAssertion up=false keeps the token's permissions and binds it to its RP", n_up_false),
        ("wrong pinUvAuthParam -> PIN_AUTH_INVALID; protocol 3 -> INVALID_PARAMETER; no protocol -> "
         "MISSING_PARAMETER; zero-length -> PIN_INVALID", n_bad_param),
        ("a token's mc/ga used up by makeCredential / getAssertion; a new token works", n_used_up),
        ("PIN set, no token: non-discoverable makeCredential works (makeCredUvNotRqd), discoverable -> "
         "PUAT_REQUIRED; getAssertion works without UV, user id only", n_no_token),
        ("changePIN: old tokens and the old PIN refused, the new PIN works; wrong current PIN, 64-byte new PIN",
         n_change_pin, new_pin),
        ("wrong PIN -> PIN_INVALID, retries 7, a new key agreement key; right PIN -> 8", n_wrong_pin),
        ("retries survive a restart on the same --state", n_durable),
        ("3 wrong PINs in a row -> PIN_AUTH_BLOCKED; then every PIN operation blocked", n_auth_blocked),
        ("a power cycle lifts it; retries 0 -> PIN_BLOCKED, also after a restart", n_pin_blocked),
        ("reset: clientPin false, retries 8, credentials gone, a new PIN works", n_reset, pin),
    ]


# ---- U: built-in user verification; A: alwaysUv --------------------------------

def u_info(side):
    check_pin_info(side.ctap, builtin_uv=True)
    for v in (2, 1):
        n = side.client_pin(PROTOCOLS[v]()).get_uv_retries()
        expect(isinstance(n, int) and n > 0, f"getUVRetries (protocol {v}) {n!r}, expected a positive count")
    expect_retries(side, 8)


def u_uv_token(side, v):
    proto = PROTOCOLS[v]()
    cp = side.client_pin(proto)
    refuse(ERR.INVALID_PARAMETER, "permissions 0", cp.get_uv_token, P(0))
    for perm, name in ((BE, "be"), (LBW, "lbw"), (ACFG, "acfg")):
        refuse(ERR.UNAUTHORIZED_PERMISSION, f"permission {name}", cp.get_uv_token, perm)
    rp_id = f"uv{v}.example.com"
    token = cp.get_uv_token(MC, rp_id)
    refuse(ERR.PIN_AUTH_INVALID, "makeCredential for another RP with a UV token for " + rp_id,
           mk, side, "other.example.com", token=token, proto=proto)
    resp, cred = mk(side, rp_id, rk=True, token=token, proto=proto)
    expect_flags(resp.auth_data, True, True, "makeCredential with a UV token")
    a, _ = ga(side, rp_id, cred, token=cp.get_uv_token(GA, rp_id), proto=proto)
    expect_flags(a.auth_data, True, True, "getAssertion with a UV token")
    meta = CredentialManagement(side.ctap, proto, cp.get_uv_token(CM)).get_metadata()
    want = {2: 1, 1: 2}[v]  # protocol 2's check runs first, each makes one discoverable credential
    expect(meta[CRED.EXISTING_CRED_COUNT] == want,
           f"getCredsMetadata with a UV cm token: {meta[CRED.EXISTING_CRED_COUNT]} credentials, expected {want}")


def u_rk_without_uv(side):
    # CTAP 2.1 §6.1.2 step 7 (makeCredUvNotRqd true): protected by some form
    # of user verification (built-in UV), "uv" false, no pinUvAuthParam, "rk"
    # true -> PUAT_REQUIRED if clientPin is true, "Otherwise ... return
    # CTAP2_ERR_OPERATION_DENIED".
    refuse(ERR.OPERATION_DENIED, "discoverable makeCredential without uv or a token, built-in UV, no PIN "
           "(§6.1.2 step 7)", mk, side, "rk.example.com", rk=True)
    resp, _ = mk(side, "rk.example.com", rk=True, uv=True)
    expect_flags(resp.auth_data, True, True, "discoverable makeCredential uv=true")
    resp, _ = mk(side, "rk.example.com")
    expect_flags(resp.auth_data, True, False, "non-discoverable makeCredential without uv")


def u_with_pin(side):
    side.set_pin("2580")
    check_pin_info(side.ctap, builtin_uv=True, client_pin=True)
    refuse(ERR.PUAT_REQUIRED, "discoverable makeCredential without uv or a token, PIN set (§6.1.2 step 7)",
           mk, side, "rk.example.com", rk=True)
    resp, _ = mk(side, "rk.example.com", rk=True, uv=True)
    expect_flags(resp.auth_data, True, True, "discoverable makeCredential uv=true with a PIN set")
    resp, cred = mk(side, "rk.example.com", rk=True, token=side.token(MC))
    expect_flags(resp.auth_data, True, True, "makeCredential with a PIN token")
    a, _ = ga(side, "rk.example.com", cred, token=side.client_pin().get_uv_token(GA, "rk.example.com"))
    expect_flags(a.auth_data, True, True, "getAssertion with a UV token, PIN set")


def uv_retries(side, want, when):
    for v in (2, 1):
        n = side.client_pin(PROTOCOLS[v]()).get_uv_retries()
        expect(n == want, f"getUVRetries (protocol {v}) {n!r} {when}, expected {want}")


def v_failures(side):
    uv_retries(side, 8, "on a fresh device")
    refuse(ERR.UV_INVALID, "getPinUvAuthTokenUsingUv with a refusing sensor", side.client_pin().get_uv_token, GA)
    uv_retries(side, 7, "after one failed UV token")
    refuse(ERR.OPERATION_DENIED, "makeCredential uv=true with a refusing sensor", mk, side, "uv.example.com", uv=True)
    uv_retries(side, 6, "after a failed makeCredential uv=true")
    resp, _ = mk(side, "uv.example.com")
    expect_flags(resp.auth_data, True, False, "makeCredential without uv, sensor refusing")
    uv_retries(side, 6, "after a makeCredential without uv (no attempt)")


def v_blocked(side):
    side.restart()
    uv_retries(side, 6, "after a restart")
    for _ in range(6):
        refuse((ERR.UV_INVALID, ERR.UV_BLOCKED), "a failing UV token", side.client_pin().get_uv_token, GA)
    uv_retries(side, 0, "after 8 failures")
    refuse(ERR.UV_BLOCKED, "getPinUvAuthTokenUsingUv when blocked", side.client_pin().get_uv_token, GA)
    refuse(ERR.UV_BLOCKED, "makeCredential uv=true when blocked", mk, side, "uv.example.com", uv=True)
    side.restart()
    refuse(ERR.UV_BLOCKED, "getPinUvAuthTokenUsingUv when blocked, after a restart", side.client_pin().get_uv_token, GA)


def v_pin_unblocks(side):
    side.set_pin("8642")
    uv_retries(side, 0, "after setPIN (no PIN was verified)")
    resp, _ = mk(side, "uv.example.com", rk=True, token=side.token(MC))
    expect_flags(resp.auth_data, True, True, "makeCredential with a PIN token while built-in UV is blocked")
    uv_retries(side, 8, "after a correct PIN")
    refuse(ERR.UV_INVALID, "the sensor still refuses, now counted again", side.client_pin().get_uv_token, GA)
    uv_retries(side, 7, "after one more failure")


def a_info(side, builtin_uv):
    check_pin_info(side.ctap, builtin_uv=builtin_uv, always_uv=True)


def a_builtin(side):
    # CTAP 2.1 §6.1.2 step 6 / §6.2.2 step 5: with alwaysUv, "If the "uv"
    # option is false and the authenticator supports a built-in user
    # verification method, and the user verification method is enabled then:
    # Let the "uv" option be treated as being present with the value true."
    resp, cred = mk(side, "always.example.com")
    expect_flags(resp.auth_data, True, True, "makeCredential without uv or a token (alwaysUv, built-in UV)")
    a, _ = ga(side, "always.example.com", cred)
    expect_flags(a.auth_data, True, True, "getAssertion without uv or a token (alwaysUv, built-in UV)")
    a, _ = ga(side, "always.example.com", cred, up=False)
    expect_flags(a.auth_data, False, False, "getAssertion up=false (alwaysUv applies when up is true)")


def a_no_pin(side):
    # §6.1.2 step 6 / §6.2.2 step 5: not protected by any user verification,
    # clientPin supported -> CTAP2_ERR_PUAT_REQUIRED.
    refuse(ERR.PUAT_REQUIRED, "makeCredential, alwaysUv, no PIN, no built-in UV", mk, side, "always.example.com")
    refuse(ERR.PUAT_REQUIRED, "getAssertion, alwaysUv, no PIN, no built-in UV", ga, side, "always.example.com")


def a_pin(side):
    side.set_pin("1357")
    refuse(ERR.PUAT_REQUIRED, "non-discoverable makeCredential without a token (alwaysUv)",
           mk, side, "always.example.com")
    resp, cred = mk(side, "always.example.com", token=side.token(MC))
    expect_flags(resp.auth_data, True, True, "makeCredential with a token (alwaysUv)")
    refuse(ERR.PUAT_REQUIRED, "getAssertion without a token (alwaysUv)", ga, side, "always.example.com", cred)
    a, _ = ga(side, "always.example.com", cred, token=side.token(GA))
    expect_flags(a.auth_data, True, True, "getAssertion with a token (alwaysUv)")


# ---- M: authenticatorCredentialManagement (0x0A) ----------------------------------

CM1, CM2 = "cm1.example.com", "cm2.example.com"


def m_empty(side):
    side.set_pin("8642")
    cm = side.credman()
    meta = cm.get_metadata()
    expect(meta.get(CRED.EXISTING_CRED_COUNT) == 0, f"getCredsMetadata {dict(meta)}, expected 0 existing")
    remaining = meta.get(CRED.MAX_REMAINING_COUNT)
    expect(isinstance(remaining, int) and remaining > 0, f"maxPossibleRemainingResidentCredentialsCount {remaining!r}")
    side.notes["remaining"] = remaining
    refuse(ERR.NO_CREDENTIALS, "enumerateRPsBegin without discoverable credentials", cm.enumerate_rps_begin)
    refuse(ERR.NO_CREDENTIALS, "enumerateCredentialsBegin without discoverable credentials",
           cm.enumerate_creds_begin, sha256(CM1.encode()))


def m_auth(side):
    sub = CredentialManagement.CMD.GET_CREDS_METADATA
    refuse(ERR.PUAT_REQUIRED, "getCredsMetadata without pinUvAuthParam", side.ctap.credential_mgmt, sub)
    side.token(CM)
    refuse(ERR.PIN_AUTH_INVALID, "getCredsMetadata with a wrong pinUvAuthParam",
           side.ctap.credential_mgmt, sub, None, side.proto.VERSION, os.urandom(32))
    refuse(ERR.PIN_AUTH_INVALID, "getCredsMetadata with an mc+ga token", side.credman(MC | GA).get_metadata)
    meta = side.credman(proto=PinProtocolV1()).get_metadata()
    expect(meta.get(CRED.EXISTING_CRED_COUNT) == 0, f"getCredsMetadata with a protocol 1 token: {dict(meta)}")


def m_setup(side):
    specs = (("alice", CM1, -7, {"credProtect": 2, "largeBlobKey": True}),
             ("bob", CM1, -8, None),
             ("carol", CM2, -7, None))
    for name, rp_id, alg, ext in specs:
        resp, cred = mk(side, rp_id, alg=alg, rk=True, token=side.token(MC), extensions=ext, name=name)
        side.creds[name] = cred
    expect(isinstance(side.creds["alice"]["large_blob_key"], bytes), "no largeBlobKey for alice")
    mk(side, CM1, token=side.token(MC), name="not-discoverable")
    meta = side.credman().get_metadata()
    expect(meta.get(CRED.EXISTING_CRED_COUNT) == 3, f"getCredsMetadata {dict(meta)}, expected 3 existing")
    remaining = meta.get(CRED.MAX_REMAINING_COUNT)
    expect(remaining == side.notes["remaining"] - 3,
           f"remaining {remaining}, expected {side.notes['remaining']} - 3")
    side.notes["remaining"] = remaining


def m_rps(side):
    cm = side.credman()
    rps = cm.enumerate_rps()
    expect(len(rps) == 2 and rps[0].get(CRED.TOTAL_RPS) == 2,
           f"{len(rps)} RPs, totalRPs {rps[0].get(CRED.TOTAL_RPS) if rps else None}, expected 2")
    ids = []
    for r in rps:
        rp = r.get(CRED.RP) or {}
        ids.append(rp.get("id"))
        expect(r.get(CRED.RP_ID_HASH) == sha256(str(rp.get("id")).encode()), f"rpIDHash of {rp} is not SHA-256 of its id")
    expect(sorted(ids) == [CM1, CM2], f"RP ids {ids}, expected {[CM1, CM2]}")
    refuse(ERR.NOT_ALLOWED, "enumerateRPsGetNextRP after the last RP", cm.enumerate_rps_next)


def enumerate_users(side, rp_id, cm=None):
    """{credential id: enumerateCredentials entry} for one RP."""
    cm = cm or side.credman()
    got = cm.enumerate_creds(sha256(rp_id.encode()))
    return {e.get(CRED.CREDENTIAL_ID, {}).get("id"): e for e in got}, got


def m_creds(side):
    cm = side.credman()
    by_id, got = enumerate_users(side, CM1, cm)
    expect(len(got) == 2 and got[0].get(CRED.TOTAL_CREDENTIALS) == 2,
           f"{len(got)} credentials for {CM1}, totalCredentials {got[0].get(CRED.TOTAL_CREDENTIALS) if got else None}")
    refuse(ERR.NOT_ALLOWED, "enumerateCredentialsGetNextCredential after the last one", cm.enumerate_creds_next)
    more, _ = enumerate_users(side, CM2, cm)
    by_id.update(more)
    for name in ("alice", "bob", "carol"):
        cred = side.creds[name]
        e = by_id.get(cred["id"])
        expect(e is not None, f"{name}'s credential not enumerated")
        expect(e[CRED.CREDENTIAL_ID].get("type") == "public-key", f"{name}: credentialID {e[CRED.CREDENTIAL_ID]}")
        u = e.get(CRED.USER) or {}
        want = {"id": cred["user"], "name": name, "displayName": name.title()}
        expect({k: u.get(k) for k in want} == want, f"{name}: user {u}, expected {want}")
        key = CoseKey.parse(e.get(CRED.PUBLIC_KEY) or {})
        expect(key.ALGORITHM == cred["key"].ALGORITHM, f"{name}: publicKey algorithm {key.ALGORITHM}")
        side.notes[f"key-{name}"] = key
    alice, bob = by_id[side.creds["alice"]["id"]], by_id[side.creds["bob"]["id"]]
    expect(alice.get(CRED.CRED_PROTECT) == 2, f"alice: credProtect {alice.get(CRED.CRED_PROTECT)!r}, expected 2")
    expect(bob.get(CRED.CRED_PROTECT) in (None, 1), f"bob: credProtect {bob.get(CRED.CRED_PROTECT)!r}, expected 1")
    expect(alice.get(CRED.LARGE_BLOB_KEY) == side.creds["alice"]["large_blob_key"],
           "alice: largeBlobKey (0x0B) is not makeCredential's")
    expect(CRED.LARGE_BLOB_KEY not in bob, "bob: a largeBlobKey without the extension")
    refuse(ERR.NO_CREDENTIALS, "enumerateCredentialsBegin for an RP without discoverable credentials",
           side.credman().enumerate_creds_begin, sha256(b"nothing.example.com"))


def m_keys(side):
    for name in ("alice", "bob", "carol"):
        cred, key = side.creds[name], side.notes.get(f"key-{name}")
        expect(key is not None, f"needs {name}'s enumerated key")
        a, cdh = ga(side, cred["rp"], cred)
        try:
            a.verify(cdh, key)
        except Exception as e:
            raise Fail(f"{name}: the enumerated publicKey does not verify its assertion: {type(e).__name__} {e}")


def m_bound(side):
    cm = side.credman(CM, CM1)
    first = cm.enumerate_creds_begin(sha256(CM1.encode()))
    expect(first.get(CRED.TOTAL_CREDENTIALS) == 2, f"enumerateCredentialsBegin for {CM1} with a token for it: {first}")
    refuse(ERR.PIN_AUTH_INVALID, f"enumerateCredentialsBegin for {CM2} with a cm token for {CM1}",
           cm.enumerate_creds_begin, sha256(CM2.encode()))
    refuse(ERR.PIN_AUTH_INVALID, "getCredsMetadata with a cm token bound to an RP", cm.get_metadata)
    refuse(ERR.PIN_AUTH_INVALID, "enumerateRPsBegin with a cm token bound to an RP", cm.enumerate_rps_begin)
    refuse(ERR.PIN_AUTH_INVALID, f"deleteCredential of a {CM2} credential with a cm token for {CM1}",
           cm.delete_cred, desc(side.creds["carol"]["id"]))


def m_update(side):
    alice, bob = side.creds["alice"], side.creds["bob"]
    new = {"id": alice["user"], "name": "alice.renamed", "displayName": "Alice Renamed"}
    side.credman().update_user_info(desc(alice["id"]), new)
    by_id, _ = enumerate_users(side, CM1)
    u = by_id.get(alice["id"], {}).get(CRED.USER) or {}
    expect({k: u.get(k) for k in new} == new, f"enumerated user after updateUserInformation {u}, expected {new}")
    u = by_id.get(bob["id"], {}).get(CRED.USER) or {}
    expect(u.get("name") == "bob", f"bob's user changed too: {u}")
    token = side.token(GA, CM1)
    cdh = os.urandom(32)
    found = side.ctap.get_assertions(CM1, cdh, pin_uv_param=side.proto.authenticate(token, cdh),
                                     pin_uv_protocol=side.proto.VERSION)
    users = {a.credential["id"]: a.user or {} for a in found}
    expect(set(users) == {alice["id"], bob["id"]}, f"discoverable getAssertion found {len(users)} credentials, expected 2")
    u = users[alice["id"]]
    expect(u.get("name") == new["name"] and u.get("displayName") == new["displayName"],
           f"getAssertion user {u} (with UV, two accounts), expected name/displayName {new['name']!r}/"
           f"{new['displayName']!r}")


def m_delete(side):
    carol = side.creds["carol"]
    side.credman().delete_cred(desc(carol["id"]))
    refuse(ERR.NO_CREDENTIALS, "getAssertion for the deleted credential", ga, side, CM2, carol)
    refuse(ERR.NO_CREDENTIALS, "discoverable getAssertion for its RP", ga, side, CM2)
    cm = side.credman()
    meta = cm.get_metadata()
    expect(meta.get(CRED.EXISTING_CRED_COUNT) == 2, f"getCredsMetadata {dict(meta)}, expected 2 existing")
    expect(meta.get(CRED.MAX_REMAINING_COUNT) == side.notes["remaining"] + 1,
           f"remaining {meta.get(CRED.MAX_REMAINING_COUNT)}, expected {side.notes['remaining']} + 1")
    rps = cm.enumerate_rps()
    expect([(r.get(CRED.RP) or {}).get("id") for r in rps] == [CM1] and rps[0].get(CRED.TOTAL_RPS) == 1,
           f"RPs after the delete: {[dict(r) for r in rps]}")
    refuse(ERR.NO_CREDENTIALS, f"enumerateCredentialsBegin for {CM2}", cm.enumerate_creds_begin, sha256(CM2.encode()))
    refuse(ERR.NO_CREDENTIALS, "deleteCredential again", cm.delete_cred, desc(carol["id"]))


# ---- E: hmac-secret (CTAP 2.1 §12.5) through python-fido2's HmacSecretExtension ----

def prf_salt(value):
    """WebAuthn's prf salt, as python-fido2 derives it."""
    return sha256(b"WebAuthn PRF\0" + value)


def creation_options(rp_id, uid, extensions):
    return PublicKeyCredentialCreationOptions(
        rp=PublicKeyCredentialRpEntity(id=rp_id, name=rp_id),
        user=PublicKeyCredentialUserEntity(id=uid, name="h", display_name="H"),
        challenge=os.urandom(32),
        pub_key_cred_params=[PublicKeyCredentialParameters(type=PublicKeyCredentialType.PUBLIC_KEY, alg=-7)],
        extensions=extensions)


def hmac_get(side, cred, salt1, salt2=None, proto=None, uv=None, token=None):
    """getAssertion with hmac-secret built and read by python-fido2's
    HmacSecretExtension; returns (output1, output2, assertion)."""
    proto = proto or side.proto
    salts = {"salt1": salt1}
    if salt2 is not None:
        salts["salt2"] = salt2
    request = PublicKeyCredentialRequestOptions(
        challenge=os.urandom(32), rp_id=cred["rp"],
        allow_credentials=[PublicKeyCredentialDescriptor(type=PublicKeyCredentialType.PUBLIC_KEY, id=cred["id"])],
        extensions={"hmacGetSecret": salts})
    processor = HMAC.get_assertion(side.ctap, request, proto)
    expect(processor is not None, "HmacSecretExtension does not process this getAssertion")
    inputs = processor.prepare_inputs(request.allow_credentials[0], token)
    a, _ = ga(side, cred["rp"], cred, uv=uv, token=token, proto=proto, extensions=inputs)
    enc = (a.auth_data.extensions or {}).get("hmac-secret")
    want = (16 if proto.VERSION == 2 else 0) + 32 * (1 if salt2 is None else 2)
    expect(isinstance(enc, bytes) and len(enc) == want,
           f"hmac-secret output of {len(enc) if isinstance(enc, bytes) else enc!r} bytes, expected {want} "
           f"(protocol {proto.VERSION}, {1 if salt2 is None else 2} salts)")
    out = (processor.prepare_outputs(a, token) or {}).get("hmacGetSecret")
    expect(out is not None, "no hmacGetSecret output")
    return out.output1, out.output2, a


def e_make(side):
    uid = os.urandom(16)
    options = creation_options("hmac.example.com", uid, {"hmacCreateSecret": True})
    processor = HMAC.make_credential(side.ctap, options, side.proto)
    expect(processor is not None, "HmacSecretExtension does not process this makeCredential (is hmac-secret listed?)")
    inputs = processor.prepare_inputs(None)
    expect(inputs == {"hmac-secret": True}, f"extension input {inputs}")
    resp, cred = mk(side, "hmac.example.com", uid=uid, rk=True, uv=True, extensions=inputs)
    ext = resp.auth_data.extensions or {}
    expect(resp.auth_data.flags & FLAG.ED and ext.get("hmac-secret") is True,
           f"makeCredential extensions {ext}, expected hmac-secret true")
    outputs = processor.prepare_outputs(resp, None)
    expect(outputs == {"hmacCreateSecret": True}, f"client outputs {outputs}")
    side.creds["h"] = cred


def e_stable(side):
    cred = side.creds["h"]
    s1, s2 = os.urandom(32), os.urandom(32)
    o1, rest, a = hmac_get(side, cred, s1)
    expect_flags(a.auth_data, True, False, "getAssertion with hmac-secret, no uv")
    expect(len(o1) == 32 and not rest, f"output1 of {len(o1)} bytes, output2 {rest!r}")
    again, _, _ = hmac_get(side, cred, s1)
    expect(again == o1, "the same salt gave another output")
    other, _, _ = hmac_get(side, cred, s2)
    expect(other != o1, "two salts gave the same output")
    side.notes.update(s1=s1, s2=s2, o1=o1, o2=other)


def e_two_salts(side):
    n = side.notes
    x1, x2, _ = hmac_get(side, side.creds["h"], n["s1"], n["s2"])
    expect(len(x1) == 32 and len(x2) == 32, f"outputs of {len(x1)} and {len(x2)} bytes")
    expect(x1 == n["o1"] and x2 == n["o2"], "two salts: the outputs differ from each salt's own")


def e_uv(side):
    n, cred = side.notes, side.creds["h"]
    u1, _, a = hmac_get(side, cred, n["s1"], uv=True)
    expect_flags(a.auth_data, True, True, "getAssertion with hmac-secret, uv=true")
    expect(u1 != n["o1"], "the same output with and without UV (CredRandomWithUV / WithoutUV)")
    u1b, u2, _ = hmac_get(side, cred, n["s1"], n["s2"], uv=True)
    expect(u1b == u1 and u2 != n["o2"], "with UV: not stable, or salt2's output the same as without UV")
    token = side.client_pin().get_uv_token(GA, cred["rp"])
    t1, _, a = hmac_get(side, cred, n["s1"], token=token)
    expect_flags(a.auth_data, True, True, "getAssertion with hmac-secret and a UV token")
    expect(t1 == u1, "UV through a pinUvAuthToken gave another output than uv=true")
    n.update(u1=u1, u2=u2)


def e_protocol_1(side):
    n, cred, p1 = side.notes, side.creds["h"], PinProtocolV1()
    x1, x2, _ = hmac_get(side, cred, n["s1"], n["s2"], proto=p1)
    expect(x1 == n["o1"] and x2 == n["o2"], "protocol 1 outputs differ from protocol 2's (no UV)")
    y1, _, _ = hmac_get(side, cred, n["s1"], proto=p1, uv=True)
    expect(y1 == n["u1"], "protocol 1 output with UV differs from protocol 2's")


def web_register(client, extensions, rk=ResidentKeyRequirement.REQUIRED,
                 uv=UserVerificationRequirement.REQUIRED, name="erin"):
    server = web_server()
    person = PublicKeyCredentialUserEntity(id=os.urandom(16), name=name, display_name=name.title())
    options, state = server.register_begin(person, resident_key_requirement=rk, user_verification=uv,
                                           extensions=extensions)
    reg = client.make_credential(options.public_key)
    auth_data = server.register_complete(state, reg)
    web = {"user": person, "cred": auth_data.credential_data, "counter": auth_data.counter}
    cd = auth_data.credential_data
    cred = {"id": cd.credential_id, "key": cd.public_key, "rp": WEB_RP_ID, "user": person.id}
    return reg, auth_data, web, cred


def e_prf_client(side):
    client = Fido2Client(side.dev, DefaultClientDataCollector(origin=ORIGIN), user_interaction=NeverPrompt())
    reg, _, web, cred = web_register(client, {"prf": {}})
    prf = reg.client_extension_results.prf
    expect(prf is not None and prf.enabled is True, f"prf registration output {prf!r}, expected enabled true")
    first, second = b"first input", b"second input"
    resp = web_authenticate(client, web, False, {"prf": {"eval": {"first": first, "second": second}}})
    prf = resp.client_extension_results.prf
    results = prf.results if prf is not None else None
    expect(results is not None and len(results.first) == 32 and len(results.second or b"") == 32,
           f"prf authentication output {prf!r}")
    x1, x2, _ = hmac_get(side, cred, prf_salt(first), prf_salt(second), uv=True)
    expect((results.first, results.second) == (x1, x2),
           "Fido2Client's prf results differ from hmac-secret over CTAP with UV for the same salts")


def e_prf_at_create(side):
    client = Fido2Client(side.dev, DefaultClientDataCollector(origin=ORIGIN), user_interaction=NeverPrompt())
    first, second = b"at creation", b"and its twin"
    reg, _, _, cred = web_register(client, {"prf": {"eval": {"first": first, "second": second}}}, name="maud")
    prf = reg.client_extension_results.prf
    results = prf.results if prf is not None else None
    expect(prf is not None and prf.enabled is True and results is not None
           and len(results.first) == 32 and len(results.second or b"") == 32,
           f"prf registration output {prf!r}, expected enabled and two results (hmac-secret-mc)")
    x1, x2, _ = hmac_get(side, cred, prf_salt(first), prf_salt(second), uv=True)
    expect((results.first, results.second) == (x1, x2),
           "hmac-secret-mc's results at creation differ from hmac-secret's at getAssertion (same salts, UV)")


def e_hmac_client(side):
    client = Fido2Client(side.dev, DefaultClientDataCollector(origin=ORIGIN), user_interaction=NeverPrompt(),
                         extensions=[HmacSecretExtension(allow_hmac_secret=True)])
    reg, _, web, cred = web_register(client, {"hmacCreateSecret": True}, name="hank")
    expect(reg.client_extension_results.hmac_create_secret is True,
           f"hmacCreateSecret output {reg.client_extension_results!r}")
    salt = os.urandom(32)
    resp = web_authenticate(client, web, True, {"hmacGetSecret": {"salt1": salt}})
    out = resp.client_extension_results.hmac_get_secret
    expect(out is not None and len(out.output1) == 32, f"hmacGetSecret output {out!r}")
    x1, _, _ = hmac_get(side, cred, salt, uv=True)
    expect(out.output1 == x1, "Fido2Client's hmacGetSecret differs from hmac-secret over CTAP with UV")


# ---- W with a PIN: Fido2Client asking the user for it --------------------------------

class PinPrompt(UserInteraction):
    """A user who types the PIN whenever Fido2Client asks."""

    def __init__(self, pin):
        self.pin = pin
        self.asked = []

    def prompt_up(self):
        pass

    def request_pin(self, permissions, rp_id):
        self.asked.append((permissions, rp_id))
        return self.pin

    def request_uv(self, permissions, rp_id):
        return True


def pin_client(side, pin=None):
    ui = PinPrompt(side.pin if pin is None else pin)
    return Fido2Client(side.dev, DefaultClientDataCollector(origin=ORIGIN), user_interaction=ui), ui


def wp_register(side):
    side.set_pin("9753")
    client, ui = pin_client(side)
    reg, auth_data, web, _ = web_register(client, {"credProps": True}, name="pat")
    expect(len(ui.asked) == 1 and ui.asked[0][0] & MC and ui.asked[0][1] == WEB_RP_ID,
           f"PIN requests {ui.asked}, expected one with mc for {WEB_RP_ID}")
    expect_flags(auth_data, True, True, "registration with the PIN")
    props = reg.client_extension_results.get("credProps")
    expect(props is not None and props.get("rk") is True, f"credProps {props}")
    side.web = web


def wp_authenticate(side, discoverable):
    client, ui = pin_client(side)
    web_authenticate(client, side.web, discoverable)
    expect(len(ui.asked) == 1 and ui.asked[0][0] & GA, f"PIN requests {ui.asked}, expected one with ga")


def wp_discouraged(side):
    client, ui = pin_client(side)
    _, auth_data, _, _ = web_register(client, None, rk=ResidentKeyRequirement.DISCOURAGED,
                                      uv=UserVerificationRequirement.DISCOURAGED, name="quinn")
    expect(not ui.asked, f"PIN requests {ui.asked} for a non-discoverable credential without uv")
    expect_flags(auth_data, True, False, "non-discoverable registration, uv discouraged")


def wp_puat_required(side):
    client, ui = pin_client(side)
    _, auth_data, _, _ = web_register(client, None, uv=UserVerificationRequirement.DISCOURAGED, name="ruth")
    expect(len(ui.asked) == 1, f"PIN requests {ui.asked}: PUAT_REQUIRED should make Fido2Client ask once")
    expect_flags(auth_data, True, True, "discoverable registration after PUAT_REQUIRED")


def wp_wrong_pin(side):
    client, ui = pin_client(side, WRONG_PIN)
    options, _ = web_server().authenticate_begin([side.web["cred"]],
                                                 user_verification=UserVerificationRequirement.REQUIRED)
    try:
        client.get_assertion(options.public_key)
    except ClientError as e:
        cause = getattr(e.cause, "code", None)
        expect(cause == ERR.PIN_INVALID, f"ClientError {e!r}, expected one caused by PIN_INVALID")
    else:
        raise Fail("Fido2Client authenticated with a wrong PIN")
    expect_retries(side, 7, "after the wrong PIN through Fido2Client")
    wp_authenticate(side, False)
    expect_retries(side, 8, "after the right PIN through Fido2Client")


# ---- the groups on devices of their own ----------------------------------------------

SIDE_GROUPS = (
    ("N", "ClientPIN with PIN/UV auth protocol 2 and then 1, on a device without built-in UV"),
    ("U", "tokens from the built-in user verification (getPinUvAuthTokenUsingUvWithPermissions)"),
    ("V", "built-in user verification retries (--refuse-uv)"),
    ("A", "alwaysUv (--always-uv, with and without built-in UV)"),
    ("M", "authenticatorCredentialManagement"),
    ("E", "hmac-secret, also as Fido2Client's prf and hmacGetSecret"),
    ("W", "Fido2Client + Fido2Server with a PIN the user types"),
    ("K", "the `tokenmint fido2 key` CLI, checked through python-fido2"),
)


def side_groups(root, pin_capable):
    if not pin_capable:
        # Counted: the device serves ClientPIN, so these groups must run.
        why = ("the device lists no pinUvAuthProtocols in getInfo" if pin_capable is False
               else "the first device never answered getInfo")
        for letter, what in SIDE_GROUPS:
            checks.fail(f"{letter}: {what}: not run: {why}")
        return
    for v, pin, new_pin in ((2, "1234", "2468-neu"), (1, "ünï€", "13579")):
        side_group(root, f"N{v}", f"n{v}", [NO_BUILTIN_UV], n_steps(pin, new_pin), proto=v)
    side_group(root, "U", "u", [], [
        ("getInfo with built-in UV; getUVRetries > 0 (protocols 2 and 1); getPINRetries 8", u_info),
        ("protocol 2 UV tokens: permissions 0 / be / lbw / acfg refused; mc, ga, cm served, RP-bound", u_uv_token, 2),
        ("protocol 1 UV tokens: the same", u_uv_token, 1),
        ("no PIN: discoverable makeCredential without uv or a token -> OPERATION_DENIED; uv=true works",
         u_rk_without_uv),
        ("PIN set: clientPin true with uv true; discoverable makeCredential without uv/token -> PUAT_REQUIRED; "
         "uv=true, PIN and UV tokens work", u_with_pin),
    ])
    side_group(root, "V", "v", ["--refuse-uv"], [
        ("a refusing sensor: UV_INVALID / OPERATION_DENIED, each spends one of getUVRetries' 8", v_failures),
        ("the count survives restarts; at 0 -> UV_BLOCKED without asking", v_blocked),
        ("a correct PIN gives the 8 back", v_pin_unblocks),
    ])
    side_group(root, "A", "a1", [ALWAYS_UV], [
        ("getInfo: alwaysUv true, makeCredUvNotRqd false, uv true", a_info, True),
        ("built-in UV: makeCredential / getAssertion without uv or a token verify the user (UV set); up=false "
         "stays silent", a_builtin),
    ])
    side_group(root, "A", "a2", [ALWAYS_UV, NO_BUILTIN_UV], [
        ("getInfo: alwaysUv true, makeCredUvNotRqd false, no uv", a_info, False),
        ("no PIN: makeCredential / getAssertion -> PUAT_REQUIRED", a_no_pin),
        ("PIN set: without a token -> PUAT_REQUIRED, with one UV set", a_pin),
    ])
    side_group(root, "M", "m", [NO_BUILTIN_UV], [
        ("no discoverable credential: getCredsMetadata 0; enumerateRPs/Credentials -> NO_CREDENTIALS", m_empty),
        ("no token -> PUAT_REQUIRED; wrong pinUvAuthParam / no cm permission -> PIN_AUTH_INVALID; protocol 1 token "
         "works", m_auth),
        ("3 discoverable credentials in 2 RPs: getCredsMetadata 3, remaining 3 fewer", m_setup),
        ("enumerateRPs: 2 RPs (id, rpIDHash, totalRPs), then NOT_ALLOWED", m_rps),
        ("enumerateCredentials: user, credentialID, publicKey, totalCredentials, credProtect, largeBlobKey",
         m_creds),
        ("each enumerated publicKey verifies its credential's assertion", m_keys),
        ("a cm token bound to an RP: only that RP's credentials", m_bound),
        ("updateUserInformation: seen in enumeration and in getAssertion's user (UV)", m_update),
        ("deleteCredential: NO_CREDENTIALS for it, metadata and RPs updated", m_delete),
    ])
    side_group(root, "E", "e", [], [
        ("makeCredential hmac-secret true (HmacSecretExtension, hmacCreateSecret)", e_make),
        ("protocol 2: 32-byte output, the same per salt, another for another salt", e_stable),
        ("two salts: two outputs, each the one of its salt alone", e_two_salts),
        ("with UV (uv=true, or a UV token): other outputs, the same both ways", e_uv),
        ("protocol 1: the same outputs as protocol 2, without and with UV", e_protocol_1),
        ("Fido2Client prf (enabled; results = hmac-secret of the PRF salts with UV)", e_prf_client),
        ("Fido2Client prf eval at registration: hmac-secret-mc results = getAssertion's", e_prf_at_create),
        ("Fido2Client hmacCreateSecret / hmacGetSecret", e_hmac_client),
    ])
    side_group(root, "W", "w", [NO_BUILTIN_UV], [
        ("PIN set; Fido2Client register (rk, uv required) asks the PIN once (mc) -> Fido2Server", wp_register),
        ("Fido2Client authenticate (allow list) asks the PIN (ga) -> Fido2Server", wp_authenticate, False),
        ("Fido2Client authenticate (discoverable) -> Fido2Server", wp_authenticate, True),
        ("non-discoverable, uv discouraged: no PIN asked, UV clear", wp_discouraged),
        ("discoverable, uv discouraged: PUAT_REQUIRED, Fido2Client asks the PIN, UV set", wp_puat_required),
        ("a wrong PIN typed: ClientError (PIN_INVALID), retries 7; the right one -> 8", wp_wrong_pin),
    ])
    side_group(root, "K", "k", [NO_BUILTIN_UV], [
        ("key info: the JSON matches python-fido2's getInfo", k_info),
        ("key pin set / change / retries from standard input; python-fido2 gets tokens with each PIN", k_pin),
        ("key credentials lists python-fido2's discoverable credential; key delete removes it", k_credentials),
        ("key reset needs --yes; then clientPin is false", k_reset),
    ])


# ---- K: `tokenmint fido2 key` (the CLI a user points at a key), checked by python-fido2 ------

def b64u(data):
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode()


def key_cli(side, *args, stdin=""):
    """Runs `tokenmint fido2 key ARGS --socket S`; returns (exit code, stdout, stderr)."""
    done = subprocess.run([TOKENMINT, "fido2", "key", *args, "--socket", side.device.socket_path],
                          input=stdin, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def k_info(side):
    code, out, err = key_cli(side, "info")
    expect(code == 0, f"key info exit {code}: {err.strip()}")
    info = json.loads(out)
    expect(info["versions"] == list(side.ctap.info.versions) and info["pinUvAuthProtocols"] == [2, 1]
           and info["options"].get("clientPin") is False and info["aaguid"] == bytes(side.ctap.info.aaguid).hex(),
           f"key info {info} differs from python-fido2's getInfo")


def k_pin(side):
    code, out, err = key_cli(side, "pin", "set", stdin="2580\n")
    expect(code == 0 and out.strip() == "PIN set", f"key pin set: exit {code}, {out.strip()!r} {err.strip()!r}")
    side.pin = "2580"
    side.token(MC | GA)  # python-fido2 gets a token with the PIN the CLI set
    code, out, err = key_cli(side, "pin", "change", stdin="0000\n1357\n")
    expect(code == 2 and "pinInvalid" in err, f"key pin change with a wrong PIN: exit {code}, {err.strip()!r}")
    code, out, _ = key_cli(side, "pin", "retries")
    expect(code == 0 and out.strip() == "7 retries", f"key pin retries after a wrong PIN: {out.strip()!r}")
    code, out, err = key_cli(side, "pin", "change", stdin="2580\n1357\n")
    expect(code == 0 and out.strip() == "PIN changed", f"key pin change: exit {code}, {err.strip()!r}")
    refuse(ERR.PIN_INVALID, "python-fido2 with the old PIN", side.token, MC | GA, pin="2580")
    side.pin = "1357"
    side.token(MC | GA)
    code, out, err = key_cli(side, "pin", "set", stdin="12\n")
    expect(code == 2, f"key pin set over a set PIN: exit {code}")


def k_credentials(side):
    uid = os.urandom(16)
    _, cred = mk(side, "cli.example.com", uid=uid, rk=True, token=side.token(MC, "cli.example.com"), name="carol")
    code, out, err = key_cli(side, "credentials", stdin="1357\n")
    expect(code == 0, f"key credentials exit {code}: {err.strip()}")
    listed = json.loads(out)
    rps = listed["relyingParties"]
    expect(listed["existing"] == 1 and len(rps) == 1 and rps[0]["rpId"] == "cli.example.com"
           and [c["id"] for c in rps[0]["credentials"]] == [b64u(cred["id"])]
           and rps[0]["credentials"][0]["userId"] == b64u(uid) and rps[0]["credentials"][0]["userName"] == "carol",
           f"key credentials {listed}")
    code, out, err = key_cli(side, "delete", b64u(cred["id"]), stdin="1357\n")
    expect(code == 0 and out.strip() == "deleted", f"key delete: exit {code}, {err.strip()!r}")
    refuse(ERR.NO_CREDENTIALS, "getAssertion for the deleted credential", ga, side, "cli.example.com", cred)
    code, _, err = key_cli(side, "delete", b64u(cred["id"]), stdin="1357\n")
    expect(code == 2 and "noCredentials" in err, f"deleting it again: exit {code}, {err.strip()!r}")


def k_reset(side):
    code, _, _ = key_cli(side, "reset")
    expect(code != 0, "key reset without --yes ran")
    code, out, err = key_cli(side, "reset", "--yes")
    expect(code == 0 and out.strip() == "reset", f"key reset --yes: exit {code}, {err.strip()!r}")
    side.ctap = Ctap2(side.dev)
    expect(side.ctap.info.options.get("clientPin") is False, "clientPin still true after the CLI's reset")


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
    # and the groups on devices of their own (side_groups) need one in getInfo
    # (0x06). The device serves ClientPIN: a getInfo without it is a failure.
    client_usable = ctx.pin_capable = bool(ctx.ctap.get_info().pin_uv_protocols)
    if not client_usable:
        checks.fail("getInfo lists no pinUvAuthProtocols: ClientPIN, group W and the side groups cannot run")
    if client_usable:
        g("W: Fido2Client register (rk required, uv required) -> Fido2Server.register_complete", w_register, ctx)
        g("W: Fido2Client authenticate (allow list) -> Fido2Server.authenticate_complete",
          w_authenticate, ctx, False)
        g("W: Fido2Client authenticate (discoverable, user handle) -> Fido2Server", w_authenticate, ctx, True)
        g("W: Fido2Client credProtect + credBlob / getCredBlob extensions", w_extensions, ctx)

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
        side_groups(root, ctx.pin_capable)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
