#!/usr/bin/env python3
"""`tokenmint serve` end to end, over real loopback HTTP, with independent clients.

The device and the cash desk here are written from the public API only (the
OpenAPI document and the token formats), not from TokenMint's code: the
device key is a pyca/cryptography Ed25519 key, its request JWTs are signed by
joserfc, its payment tokens composed and signed here; the desk authenticates
with the OAuth client-credentials grant, and joserfc verifies the access
token with the server's JWKS. Checks:

  * the OpenAPI 3.1 document validates (openapi-spec-validator);
  * a device registers, subscribes to its server-sent events, a desk enrols
    it, the push arrives; a grant, offline and online payments, a retried
    attempt (same transaction), replays and a token past the grant refused,
    the transactions listed with page/size/sort; payment pushes arrive;
  * bad input: malformed JSON, wrong content types, oversized bodies, unknown
    routes, forged and replayed device JWTs, unknown clients — each a 4xx
    with a JSON error, never a 5xx;
  * SIGKILL of the server in the middle of a burst of payments: after a
    restart every acknowledged payment is accepted again under its attempt
    with the same transaction ID, and no token is accepted under two attempts;
  * SIGTERM stops the server gracefully (exit 0, open event streams end);
  * the user-token exchange (POST /v2/user_token, IFTTT's service-key shape)
    on a server started with --service-key-file: a partner backend exchanges
    a user's access token (from the code flow, driven here over plain HTTP)
    for a user token; a wrong or missing key, another user's or a forged
    token refused; a key file others may read refused at start; without a
    key the route is 404; neither the key nor a token reaches the log.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import base64
import concurrent.futures
import hashlib
import http.client
import json
import os
import queue
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
import warnings

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization
from joserfc import jwt as jose_jwt
from joserfc.jwk import KeySet, OKPKey

# joserfc warns that RFC 9864 deprecates the polymorphic "EdDSA" name; the
# device and the issuer use it on purpose (every peer still does).
warnings.filterwarnings("ignore", message="EdDSA is deprecated")

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
AZP = "tokenmint-e2e"
TENANT = "0f8fad5b-d9cb-469f-a165-70867728950e"
DESK_SECRET = "a desk secret that is long enough"

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {name}")
    else:
        failed += 1
        print(f"FAIL  {name} {detail}")
    sys.stdout.flush()


def b64url(data, pad=False):
    text = base64.urlsafe_b64encode(data).decode()
    return text if pad else text.rstrip("=")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A `tokenmint serve` process on a state directory; `extra_args` go on
    its command line. Its standard error is collected while it runs and is
    in `log` once it stopped."""

    def __init__(self, state, port, extra_args=(), log_level="warning"):
        self.state, self.port, self.process = state, port, None
        self.extra_args, self.log_level = list(extra_args), log_level
        self.base = f"http://127.0.0.1:{port}"
        self.log, self.log_lines, self.drain = "", [], None

    def start(self):
        self.process = subprocess.Popen(
            [TOKENMINT, "serve", "--state", self.state, "--port", str(self.port), "--authorized-party", AZP, "--log-level", self.log_level,
             *self.extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the server did not start: {line!r} {self.process.stderr.read()[:2000]}")
        # Drained all along, so that a chatty log never fills the pipe.
        stderr, lines = self.process.stderr, []
        self.log_lines = lines
        self.drain = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
        self.drain.start()
        return line.strip()

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        if self.drain is not None:
            self.drain.join(timeout=10)
        self.log = "".join(self.log_lines)
        self.process.stdout.close()
        self.process.stderr.close()
        return code


def request(server, method, path, body=None, headers=None, raw=None):
    """(status, headers, parsed JSON or text)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    fields = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        fields.setdefault("Content-Type", "application/json")
    connection.request(method, path, body=data, headers=fields)
    response = connection.getresponse()
    text = response.read().decode("utf-8", "replace")
    connection.close()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    return response.status, dict(response.getheaders()), parsed


class Device:
    """A WhitelabelPay device written from the token formats."""

    def __init__(self):
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.reference = str(uuid.uuid4())
        self.enrolment = f"01/{TENANT}/{b64url(self.public, pad=True)}/{self.reference}"
        digest = hashlib.sha256(b"tokenmint.wlp.subject.v1\0" + TENANT.encode() + b"\0" + self.public).hexdigest()[:32]
        self.subject = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"
        private = self.key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
        self.jwk = OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": b64url(self.public), "d": b64url(private)})

    def jwt(self, audience, azp=AZP, lifetime=60, jti=None):
        now = int(time.time())
        claims = {"sub": self.subject, "aud": audience, "azp": azp, "iat": now, "exp": now + lifetime, "jti": jti or secrets.token_urlsafe(16)}
        return jose_jwt.encode({"alg": "EdDSA", "typ": "JWT"}, claims, self.jwk, algorithms=["EdDSA"])

    def token(self, unsigned, epoch=None):
        epoch = int(time.time()) if epoch is None else epoch
        signature = self.key.sign(f"{unsigned}/{epoch}".encode())
        return f"02/{unsigned}/{epoch}/{b64url(signature, pad=True)}"

    def offline(self, means, counter):
        return self.token(f"off.{means}.{counter}.{secrets.token_urlsafe(9)}")


class EventStream(threading.Thread):
    """Reads a device's server-sent events into a queue."""

    def __init__(self, server, device, after=None):
        super().__init__(daemon=True)
        self.server, self.device, self.after = server, device, after
        self.events = queue.Queue()
        self.ended = threading.Event()
        self.status = None

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=120)
        headers = {"Authorization": "Bearer " + self.device.jwt(self.server.base), "Accept": "text/event-stream"}
        if self.after is not None:
            headers["Last-Event-ID"] = str(self.after)
        try:
            connection.request("GET", f"/wlp/v1/devices/{self.device.subject}/events", headers=headers)
            response = connection.getresponse()
            self.status = response.status
            event = {}
            while True:
                line = response.fp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line == "":
                    if "data" in event:
                        self.events.put(event)
                    event = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    event[name] = value[1:] if value.startswith(" ") else value
        except OSError:
            pass
        finally:
            self.ended.set()

    def next(self, timeout=10):
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None


def desk_token(server, client_id="desk-1", secret=DESK_SECRET):
    form = urllib.parse.urlencode({"grant_type": "client_credentials"}).encode()
    basic = base64.b64encode(f"{urllib.parse.quote(client_id)}:{urllib.parse.quote(secret)}".encode()).decode()
    return request(server, "POST", "/oauth/token", raw=form,
                   headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + basic})


def pay(server, desk, token, attempt, value=1250):
    return request(server, "POST", "/wlp/v1/payments", {"paymentToken": token, "amount": {"value": value, "currency": "EUR"}, "attemptId": attempt},
                   headers={"Authorization": "Bearer " + desk})


def fresh_database(url, prefix):
    """A new, empty database on the cluster of `url` (a superuser's, as the
    test cluster's is); returns its URL. Servers that share their OAuth state
    share one master key, so each harness takes a database of its own."""
    parts = urllib.parse.urlsplit(url)
    name = f"{prefix}_{secrets.token_hex(4)}"
    binary = os.path.join(os.environ.get("TOKENMINT_POSTGRES_BIN", ""), "createdb")
    if not os.path.exists(binary):
        binary = "createdb"
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password) if parts.password else os.environ.get("PGPASSWORD", "")
    subprocess.run([binary, "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432), "-U", user, name], check=True,
                   env={**os.environ, "PGPASSWORD": password})
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def add_client(state, extra=()):
    result = subprocess.run([TOKENMINT, "serve", "client", "add", "--state", state, "--id", "desk-1", "--secret-stdin", *extra],
                            input=DESK_SECRET + "\n", capture_output=True, text=True)
    check("serve client add registers a confidential desk client", result.returncode == 0 and json.loads(result.stdout)["grants"] == ["client_credentials"],
          result.stderr[-500:])


def flow(server):
    """The whole payment flow with independent clients."""
    status, _, document = request(server, "GET", "/openapi.json")
    try:
        from openapi_spec_validator import validate
        validate(document)
        check("the OpenAPI 3.1 document validates (openapi-spec-validator)", status == 200 and document["openapi"] == "3.1.0")
    except Exception as error:  # noqa: BLE001 - any validator failure is a failed check
        check("the OpenAPI 3.1 document validates (openapi-spec-validator)", False, str(error)[:500])
    status, _, health = request(server, "GET", "/healthz")
    check("GET /healthz", status == 200 and health.get("status") == "ok")

    status, _, answer = desk_token(server)
    check("client_credentials grant (HTTP Basic) issues a desk token", status == 200 and answer.get("token_type") == "Bearer", answer)
    desk = answer["access_token"]
    _, _, jwks = request(server, "GET", "/oauth/jwks")
    try:
        verified = jose_jwt.decode(desk, KeySet.import_key_set(jwks), algorithms=["EdDSA"])
        ok = verified.header.get("typ") == "at+jwt" and verified.claims["client_id"] == "desk-1" and verified.claims["sub"] == "desk-1" \
            and verified.claims["iss"] == server.base and "wlp.desk" in verified.claims["scope"].split()
        check("joserfc verifies the desk's RFC 9068 access token with /oauth/jwks", ok, verified.claims)
    except Exception as error:  # noqa: BLE001
        check("joserfc verifies the desk's RFC 9068 access token with /oauth/jwks", False, str(error))
    status, _, metadata = request(server, "GET", "/.well-known/oauth-authorization-server")
    check("RFC 8414 metadata names the token endpoint and JWKS", status == 200 and metadata["jwks_uri"] == server.base + "/oauth/jwks"
          and metadata["token_endpoint"] == server.base + "/oauth/token")

    device = Device()
    status, _, body = request(server, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment},
                              headers={"Authorization": "Bearer " + device.jwt(server.base)})
    check("a device registers its enrolment token (201 pending, the subject ID both sides derive)",
          status == 201 and body.get("subjectId") == device.subject and body.get("status") == "pending", body)
    stream = EventStream(server, device)
    stream.start()
    time.sleep(0.3)
    status, _, body = request(server, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment},
                              headers={"Authorization": "Bearer " + desk})
    check("a desk enrols the scanned token (201, a new active payment means)", status == 201 and body.get("subjectId") == device.subject, body)
    means = body.get("paymentMeansId", "")
    event = stream.next()
    check("the device is told over server-sent events: enrolment-succeeded.v1",
          event is not None and event.get("event") == "enrolment-succeeded.v1" and json.loads(event["data"]).get("yp-type") == "enrolment-succeeded.v1"
          and "aps" in json.loads(event["data"]), event)

    base = f"/wlp/v1/devices/{device.subject}"
    status, _, body = request(server, "GET", base, headers={"Authorization": "Bearer " + device.jwt(server.base)})
    check("the device syncs: enrolled, its means active", status == 200 and body["status"] == "enrolled"
          and body["paymentMeans"] == [{"id": means, "active": True}], body)
    jwt = device.jwt(server.base)
    request(server, "GET", base + "/payment-means", headers={"Authorization": "Bearer " + jwt})
    status, _, body = request(server, "GET", base + "/payment-means", headers={"Authorization": "Bearer " + jwt})
    check("a device JWT used twice is refused (401)", status == 401 and body.get("error") == "unauthorized", body)
    for name, token in [("another azp", device.jwt(server.base, azp="someone-else")), ("a 10-minute lifetime", device.jwt(server.base, lifetime=600)),
                        ("another audience", device.jwt("https://example.com"))]:
        status, _, body = request(server, "GET", base, headers={"Authorization": "Bearer " + token})
        check(f"a device JWT with {name} is refused (401)", status == 401, body)
    stranger = Device()
    status, _, body = request(server, "GET", f"/wlp/v1/devices/{stranger.subject}", headers={"Authorization": "Bearer " + stranger.jwt(server.base)})
    check("an unregistered device: 404 invalidEnrolmentInstance (the SDK wipes itself)", status == 404 and body.get("error") == "invalidEnrolmentInstance", body)

    status, _, grant = request(server, "POST", base + "/offline-grants", headers={"Authorization": "Bearer " + device.jwt(server.base)}, raw=b"")
    check("an offline grant of 10 counter values from 1", status == 201 and grant.get("first") == 1 and grant.get("count") == 10, grant)

    accepted = {}
    for counter in (1, 2, 3):
        attempt = f"attempt-{counter}"
        token = device.offline(means, counter)
        status, _, body = pay(server, desk, token, attempt, value=100 * counter)
        accepted[attempt] = (token, body.get("transactionId"))
        check(f"offline payment {counter} accepted", status == 200 and body.get("status") == "accepted", body)
    types = [stream.next() for _ in range(3)]
    check("payment-succeeded.v1 pushed for each", all(t and t["event"] == "payment-succeeded.v1" for t in types), types)
    token, transaction = accepted["attempt-2"]
    status, _, body = pay(server, desk, token, "attempt-2", value=200)
    check("the same attempt retried: accepted, same transaction", status == 200 and body.get("transactionId") == transaction, body)
    status, _, body = pay(server, desk, token, "attempt-9")
    check("the token under another attempt: 409 replayedToken", status == 409 and body.get("error") == "replayedToken" and body.get("status") == "refused", body)
    status, _, body = pay(server, desk, device.offline(means, 2), "attempt-10")
    check("another token for a spent counter: 409 replayedToken", status == 409 and body.get("error") == "replayedToken", body)
    status, _, body = pay(server, desk, device.offline(means, 11), "attempt-11")
    check("a counter past the grant: 409 offlineTokenLimitReached", status == 409 and body.get("error") == "offlineTokenLimitReached", body)
    status, _, body = pay(server, desk, device.token(f"off.{means}.4.{secrets.token_urlsafe(9)}", epoch=int(time.time()) - 3600), "attempt-12")
    check("an expired token: 409 expiredToken", status == 409 and body.get("error") == "expiredToken", body)
    status, _, body = pay(server, desk, Device().offline(means, 4), "attempt-13")
    check("a token signed by another key: 409 invalidSignature", status == 409 and body.get("error") == "invalidSignature", body)
    status, _, body = pay(server, desk, device.offline("pm-unknown", 4), "attempt-14")
    check("a token of an unknown payment means: 409 deviceNotEnrolled", status == 409 and body.get("error") == "deviceNotEnrolled", body)
    failures = [stream.next(2) for _ in range(4)]
    check("payment-failed.v1 pushed for the refusals of a known device",
          sum(1 for f in failures if f and f["event"] == "payment-failed.v1") >= 3, failures)

    status, _, issued = request(server, "POST", base + "/unsigned-tokens", headers={"Authorization": "Bearer " + device.jwt(server.base)}, raw=b"")
    check("the online unsigned part for the active means", status == 201 and issued.get("unsignedToken", "").startswith(f"on.{means}."), issued)
    online = device.token(issued["unsignedToken"], epoch=issued["serverTime"])
    status, _, body = pay(server, desk, online, "attempt-online", value=5000)
    check("an online payment accepted", status == 200 and body.get("status") == "accepted", body)
    status, _, body = pay(server, desk, device.token(f"on.{means}.{secrets.token_urlsafe(16)}"), "attempt-forged")
    check("an unsigned part the server never issued: 409 notIssued", status == 409 and body.get("error") == "notIssued", body)

    status, _, page = request(server, "GET", "/wlp/v1/transactions?page=1&size=2&sort=amount,desc", headers={"Authorization": "Bearer " + device.jwt(server.base)})
    check("transactions: page 1 of size 2 by amount desc", status == 200 and page["totalElements"] == 4 and page["totalPages"] == 2
          and [t["amount"]["value"] for t in page["content"]] == [5000, 300], page)
    status, _, page = request(server, "GET", "/wlp/v1/transactions?page=2&size=2&sort=amount,desc", headers={"Authorization": "Bearer " + desk})
    check("transactions: page 2 for the desk", status == 200 and [t["amount"]["value"] for t in page["content"]] == [200, 100], page)
    status, _, page = request(server, "GET", "/wlp/v1/transactions?sort=amount&sort=createdAt,desc&size=20", headers={"Authorization": "Bearer " + desk})
    check("transactions: repeated sort keys", status == 200 and page["sort"] == ["amount,asc", "createdAt,desc"]
          and [t["amount"]["value"] for t in page["content"]] == [100, 200, 300, 5000], page)

    status, _, body = request(server, "POST", base + f"/payment-means/{means}/deactivate", headers={"Authorization": "Bearer " + device.jwt(server.base)}, raw=b"")
    check("deactivate the payment means", status == 200 and body["paymentMeans"] == [{"id": means, "active": False}], body)
    status, _, body = pay(server, desk, device.offline(means, 5), "attempt-inactive")
    check("a payment with a deactivated means: 409", status == 409 and body.get("error") == "failureToRetrievePaymentMeans", body)
    status, _, body = request(server, "POST", base + f"/payment-means/{means}/reactivate", headers={"Authorization": "Bearer " + device.jwt(server.base)}, raw=b"")
    check("reactivate it", status == 200 and body["paymentMeans"] == [{"id": means, "active": True}], body)
    return desk, device, means, stream


def bad_input(server, desk, device):
    auth = {"Authorization": "Bearer " + desk}
    cases = [
        ("malformed JSON", "POST", "/wlp/v1/payments", b'{"paymentToken": ', {"Content-Type": "application/json", **auth}, 400),
        ("a JSON array", "POST", "/wlp/v1/payments", b"[1]", {"Content-Type": "application/json", **auth}, 400),
        ("a duplicate member", "POST", "/wlp/v1/payments", b'{"attemptId":"a","attemptId":"b"}', {"Content-Type": "application/json", **auth}, 400),
        ("invalid UTF-8", "POST", "/wlp/v1/payments", b'{"attemptId":"\xff"}', {"Content-Type": "application/json", **auth}, 400),
        ("text/plain", "POST", "/wlp/v1/payments", b"{}", {"Content-Type": "text/plain", **auth}, 415),
        ("no content type", "POST", "/wlp/v1/enrolments", b"{}", auth, 415),
        ("a 1 MiB body", "POST", "/wlp/v1/payments", b'{"a":"' + b"x" * (1 << 20) + b'"}', {"Content-Type": "application/json", **auth}, 413),
        ("an unknown route", "GET", "/wlp/v1/nothing", None, auth, 404),
        ("no credentials", "POST", "/wlp/v1/payments", b"{}", {"Content-Type": "application/json"}, 401),
        ("a device JWT at a desk route", "POST", "/wlp/v1/enrolments", b"{}", {"Content-Type": "application/json", "Authorization": "Bearer " + device.jwt(server.base)}, 401),
        ("a malformed enrolment token", "POST", "/wlp/v1/enrolments", b'{"enrolmentToken":"01/x/y/z"}', {"Content-Type": "application/json", **auth}, 400),
        ("a zero amount", "POST", "/wlp/v1/payments", b'{"paymentToken":"02/a/1/b","attemptId":"z","amount":{"value":0,"currency":"EUR"}}', {"Content-Type": "application/json", **auth}, 400),
        ("a bad page", "GET", "/wlp/v1/transactions?page=0", None, auth, 400),
        ("a bad sort property", "GET", "/wlp/v1/transactions?sort=password", None, auth, 400),
        ("a bad Last-Event-ID", "GET", f"/wlp/v1/devices/{device.subject}/events", None,
         {"Authorization": "Bearer " + device.jwt(server.base), "Last-Event-ID": "-1"}, 400),
    ]
    for name, method, path, raw, headers, expected in cases:
        status, _, body = request(server, method, path, raw=raw, headers=headers)
        ok = status == expected and isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("message"), str)
        check(f"bad input, {name}: {expected} with a JSON error", ok, (status, body))
    status, _, body = desk_token(server, "desk-1", "not the secret at all")
    check("a wrong client secret: 401 invalid_client", status == 401 and body.get("error") == "invalid_client", body)
    status, _, body = desk_token(server, "nobody", DESK_SECRET)
    check("an unknown client: 401 invalid_client", status == 401 and body.get("error") == "invalid_client", body)
    status, _, body = request(server, "POST", "/oauth/token", raw=b"grant_type=implicit", headers={"Content-Type": "application/x-www-form-urlencoded"})
    check("no client credentials: 401 invalid_client", status == 401 and body.get("error") == "invalid_client", body)


def tm(*args, stdin=None):
    return subprocess.run([TOKENMINT, *args], input=stdin, capture_output=True, text=True, timeout=120)


def cli_flow(server):
    """The CLI as a device (`pay init --backend`) and as a desk (`pay desk`)."""
    with tempfile.TemporaryDirectory(prefix="tokenmint-device-") as store:
        reference = str(uuid.uuid4())
        result = tm("pay", "init", "--store", store, "--tenant", TENANT, "--reference", reference, "--environment", "development",
                    "--offline-limit", "3", "--backend", server.base, "--authorized-party", AZP, "--backend-timeout", "2")
        check("CLI device: pay init --backend", result.returncode == 0, result.stderr[-300:])
        result = tm("pay", "enrol", "--store", store)
        enrolment = result.stdout.strip()
        check("CLI device: pay enrol registers with the server", result.returncode == 0 and enrolment.startswith("01/"), result.stderr[-300:])
        result = tm("pay", "desk", "enrol", "--server", server.base, "--client-id", "desk-1", "--client-secret-stdin", enrolment,
                    stdin=DESK_SECRET + "\n")
        enrolled = json.loads(result.stdout or "{}")
        check("CLI desk: pay desk enrol", result.returncode == 0 and enrolled.get("status") == "enrolled", result.stdout + result.stderr[-300:])
        status = json.loads(tm("pay", "status", "--store", store).stdout or "{}")
        check("CLI device: pay status syncs (active, the desk's means)", status.get("state") == "active"
              and status.get("activePaymentMeans") == enrolled.get("paymentMeansId"), status)

        def desk_pay(token, attempt, amount="12.50"):
            options = ["--attempt", attempt] if attempt else []
            result = tm("pay", "desk", "pay", "--server", server.base, "--client-id", "desk-1", "--client-secret-stdin",
                        "--amount", amount, "--currency", "EUR", *options, token, stdin=DESK_SECRET + "\n")
            return result.returncode, json.loads(result.stdout or "{}")

        result = tm("pay", "mint", "--store", store)
        online = result.stdout.strip()
        check("CLI device: pay mint online (a server-issued unsigned part)", result.returncode == 0 and online.startswith("02/on."), result.stderr[-300:])
        code, body = desk_pay(online, "cli-1")
        check("CLI desk: pay desk pay accepted, exit 0, 12.50 EUR as 1250", code == 0 and body.get("status") == "accepted"
              and body.get("amount") == {"value": 1250, "currency": "EUR"}, body)
        code, body = desk_pay(online, "cli-2")
        check("CLI desk: the same token again refused, exit 1, replayedToken", code == 1 and body.get("error") == "replayedToken", body)
        second = tm("pay", "mint", "--store", store).stdout.strip()
        first_try, retry = desk_pay(second, None, amount="3"), desk_pay(second, None, amount="3")
        check("CLI desk: the same command run again (a lost answer) is a retry: the same transaction",
              first_try[0] == 0 and retry[0] == 0 and first_try[1].get("transactionId") == retry[1].get("transactionId"), (first_try, retry))
        code, body = desk_pay(second, None, amount="4")
        check("CLI desk: that attempt with another amount is a conflict, not a second payment", code == 2, body)

        # The server goes away: the device mints offline by itself, within its quota.
        port = server.port
        server.stop()
        offline = []
        for n in range(3):
            result = tm("pay", "mint", "--store", store)
            offline.append(result.stdout.strip())
        check("CLI device, server down: pay mint falls back to offline tokens", all(t.startswith("02/off.") for t in offline), offline)
        result = tm("pay", "mint", "--store", store)
        check("CLI device, server down: past the quota, exit 3", result.returncode == 3 and "offlineTokenLimitReached" in result.stderr, result.stderr[-300:])
        result = tm("pay", "online", "--store", store)
        check("CLI device, server down: pay online is an error (only the server confirms)", result.returncode == 2, result.stderr[-300:])

        server = Server(server.state, port)
        server.start()
        for n, token in enumerate(offline):
            code, body = desk_pay(token, f"cli-off-{n}", amount="1")
            check(f"CLI desk, server back: offline token {n + 1} accepted", code == 0, body)
            code, body = desk_pay(token, f"cli-off-again-{n}", amount="1")
            check(f"CLI desk: offline token {n + 1} never accepted twice", code == 1 and body.get("error") == "replayedToken", body)
        status = json.loads(tm("pay", "status", "--store", store).stdout or "{}")
        check("CLI device, server back: the sync resets the offline count", status.get("online") is True and status.get("offlineMintedTokenCount") == 0, status)
        result = tm("pay", "transactions", "--store", store, "--size", "10", "--sort", "amount,desc")
        page = json.loads(result.stdout or "{}")
        check("CLI device: pay transactions lists its 5 payments by amount", result.returncode == 0 and page.get("totalElements") == 5
              and [t["amount"]["value"] for t in page.get("content", [])] == [1250, 300, 100, 100, 100], page)
        result = tm("pay", "means", "--store", store, "--network")
        check("CLI device: pay means --network", result.returncode == 0 and json.loads(result.stdout)["paymentMeans"] == [{"id": enrolled["paymentMeansId"], "active": True}],
              result.stdout + result.stderr[-300:])
        result = tm("pay", "desk", "pay", "--server", server.base, "--client-id", "desk-1", "--client-secret-stdin", "--amount", "12.555",
                    "--currency", "EUR", "02/x/1/y", stdin=DESK_SECRET + "\n")
        check("CLI desk: three decimals of EUR refused, exit 2", result.returncode == 2, result.stderr[-200:])
    return server


def kill_mid_payment(state, port):
    """SIGKILL during a burst of payments; every acknowledged one survives."""
    server = Server(state, port)
    server.start()
    _, _, answer = desk_token(server)
    desk = answer["access_token"]
    device = Device()
    request(server, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + device.jwt(server.base)})
    _, _, body = request(server, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + desk})
    means = body["paymentMeansId"]
    base = f"/wlp/v1/devices/{device.subject}"
    first = None
    for _ in range(40):
        _, _, grant = request(server, "POST", base + "/offline-grants", headers={"Authorization": "Bearer " + device.jwt(server.base)}, raw=b"")
        first = grant["first"] if first is None else first
    total = 400
    tokens = {f"kill-{n}": device.offline(means, n) for n in range(1, total + 1)}
    answers = {}
    lock = threading.Lock()
    killed = threading.Event()

    def one(attempt):
        if killed.is_set():
            return
        try:
            status, _, body = pay(server, desk, tokens[attempt], attempt)
        except OSError:
            return
        with lock:
            answers[attempt] = (status, body)
            # The kill lands while other payments are in flight.
            if len(answers) == total // 4 and not killed.is_set():
                killed.set()
                server.process.send_signal(signal.SIGKILL)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(one, tokens))
    server.stop(signal.SIGKILL)
    acknowledged = {a: b["transactionId"] for a, (s, b) in answers.items() if s == 200}
    check(f"SIGKILL mid-burst: {len(acknowledged)} of {total} payments acknowledged, the rest cut off", 0 < len(acknowledged) < total,
          f"{len(answers)} answers")
    server = Server(state, port)
    server.start()
    _, _, answer = desk_token(server)
    desk = answer["access_token"]
    same = all(pay(server, desk, tokens[a], a)[2].get("transactionId") == t for a, t in acknowledged.items())
    check("after the restart every acknowledged attempt is accepted again with its transaction ID", same)
    retried = sum(1 for a in tokens if a not in acknowledged and pay(server, desk, tokens[a], a)[0] == 200)
    check(f"the {total - len(acknowledged)} unacknowledged attempts retried: each accepted ({retried})", retried == total - len(acknowledged))
    twice = sum(1 for a in tokens if pay(server, desk, tokens[a], a + "-other")[0] == 200)
    check("no token is accepted under a second attempt", twice == 0, f"{twice} accepted twice")
    _, _, page = request(server, "GET", "/wlp/v1/transactions?size=100", headers={"Authorization": "Bearer " + device.jwt(server.base)})
    check(f"the device's transactions list holds each of the {total} payments once", page["totalElements"] == total, page.get("totalElements"))
    return server


PARTNER_CLIENT = "partner-app"
PARTNER_REDIRECT = "http://127.0.0.1/callback"
ACCOUNT_PASSWORD = "correct horse battery staple"


def form_post(server, path, fields):
    body = urllib.parse.urlencode(fields).encode()
    return request(server, "POST", path, raw=body, headers={"Content-Type": "application/x-www-form-urlencoded"})


def code_flow_token(server, username):
    """An access token for `username` by the code flow with PKCE, over plain
    HTTP: the sign-in form posted, the redirect's code redeemed."""
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    status, headers, _ = form_post(server, "/oauth/authorize", {
        "response_type": "code", "client_id": PARTNER_CLIENT, "redirect_uri": PARTNER_REDIRECT, "code_challenge": challenge,
        "code_challenge_method": "S256", "state": "s1", "username": username, "password": ACCOUNT_PASSWORD})
    location = {name.lower(): value for name, value in headers.items()}.get("location", "")
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)).get("code")
    if status not in (302, 303) or not code:
        return None
    status, _, answer = form_post(server, "/oauth/token", {
        "grant_type": "authorization_code", "code": code, "redirect_uri": PARTNER_REDIRECT, "code_verifier": verifier, "client_id": PARTNER_CLIENT})
    return answer.get("access_token") if status == 200 and isinstance(answer, dict) else None


def exchange(server, key, body):
    """A partner backend's POST /v2/user_token (Python http.client)."""
    headers = {} if key is None else {"IFTTT-Service-Key": key}
    return request(server, "POST", "/v2/user_token", body, headers=headers)


def user_token_exchange(plain):
    """The user-token exchange on a server of its own, started with
    --service-key-file; `plain` is a server started without one."""
    status, _, body = exchange(plain, "k" * 43, {"user_id": "alice", "access_token": "x"})
    check("without --service-key-file: POST /v2/user_token is 404", status == 404 and isinstance(body, dict) and body.get("error") == "notFound", body)
    with tempfile.TemporaryDirectory(prefix="tokenmint-usertoken-") as folder:
        state = os.path.join(folder, "state")
        key_path = os.path.join(folder, "service.key")
        key = secrets.token_urlsafe(32)
        with open(key_path, "w") as file:
            file.write(key + "\n")
        os.chmod(key_path, 0o644)
        command = [TOKENMINT, "serve", "--state", state, "--port", str(free_port()), "--service-key-file", key_path]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=30)
            refused = result.returncode != 0 and "--service-key-file" in result.stderr and "chmod 600" in result.stderr \
                and key not in result.stderr + result.stdout
            detail = (result.returncode, result.stderr[-300:])
        except subprocess.TimeoutExpired:
            refused, detail = False, "the server started"
        check("a service key file others may read (0644): serve refuses to start, naming the fix", refused, detail)
        check("  ... and creates no state before the key is checked", not os.path.exists(state))
        os.chmod(key_path, 0o600)

        result = subprocess.run([TOKENMINT, "serve", "client", "add", "--state", state, "--id", PARTNER_CLIENT, "--redirect-uri", PARTNER_REDIRECT,
                                 "--grant", "authorization_code"], capture_output=True, text=True)
        ok = result.returncode == 0
        for username in ("alice", "bob"):
            result = subprocess.run([TOKENMINT, "serve", "account", "add", "--state", state, "--username", username, "--password-stdin"],
                                    input=ACCOUNT_PASSWORD + "\n", capture_output=True, text=True)
            ok = ok and result.returncode == 0
        check("user tokens: a public client and the accounts alice and bob registered", ok, result.stderr[-300:])

        server = Server(state, free_port(), extra_args=["--service-key-file", key_path], log_level="info")
        server.start()
        secrets_seen = [key]
        try:
            alice = code_flow_token(server, "alice")
            bob = code_flow_token(server, "bob")
            check("user tokens: access tokens for alice and bob from the code flow", alice is not None and bob is not None)
            if alice is None or bob is None:
                return
            secrets_seen += [alice, bob]
            status, headers, body = exchange(server, key, {"user_id": "alice", "access_token": alice})
            fields = {name.lower(): value for name, value in headers.items()}
            token = body.get("user_token") if isinstance(body, dict) else None
            check("a partner with the service key exchanges alice's access token: 200 {type: user_token, user_token}",
                  status == 200 and body.get("type") == "user_token" and isinstance(token, str) and len(token) >= 32, (status, body))
            check("  ... as application/json, Cache-Control: no-store",
                  fields.get("content-type", "").startswith("application/json") and fields.get("cache-control") == "no-store", fields)
            status, _, again = exchange(server, key, {"user_id": "alice", "access_token": alice})
            check("a second exchange gives another user token", status == 200 and again.get("user_token") not in (None, token), again)
            secrets_seen += [t for t in (token, again.get("user_token") if isinstance(again, dict) else None) if t]
            wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
            status, _, body = exchange(server, wrong, {"user_id": "alice", "access_token": alice})
            check("a wrong service key: 401 serviceKeyInvalid", status == 401 and body.get("error") == "serviceKeyInvalid", body)
            status, _, body = exchange(server, None, {"user_id": "alice", "access_token": alice})
            check("no IFTTT-Service-Key header: 401 serviceKeyInvalid", status == 401 and body.get("error") == "serviceKeyInvalid", body)
            status, _, body = exchange(server, key, {"user_id": "alice", "access_token": bob})
            check("bob's access token for alice: 401 accessTokenInvalid", status == 401 and body.get("error") == "accessTokenInvalid", body)
            forged = alice[:-4] + ("AAAA" if not alice.endswith("AAAA") else "BBBB")
            status, _, body = exchange(server, key, {"user_id": "alice", "access_token": forged})
            check("a forged access token: 401 accessTokenInvalid", status == 401 and body.get("error") == "accessTokenInvalid", body)
            status, _, body = request(server, "POST", "/v2/user_token", raw=b'{"user_id": ', headers={"IFTTT-Service-Key": key, "Content-Type": "application/json"})
            check("malformed JSON: 400 badRequest", status == 400 and body.get("error") == "badRequest", body)
            status, _, body = exchange(server, key, {"user_id": "alice"})
            check("no access_token: 400 badRequest", status == 400 and body.get("error") == "badRequest", body)
        finally:
            code = server.stop()
        check("the keyed server stops cleanly", code == 0, code)
        log = server.log
        check("the server logged the exchange and the refusals (log level info)", "user token issued" in log and "serviceKeyInvalid" in log, log[-500:])
        leaked = [n for n, s in enumerate(secrets_seen) if s and s in log]
        check("neither the service key nor an access or user token is in the server's log", not leaked and key not in log, leaked)


def graceful(server):
    """SIGTERM while payments are in flight: each request that reached the
    server is answered (none cut off mid-answer), every acknowledged payment
    stands after a restart, and open event streams end."""
    _, _, answer = desk_token(server)
    desk = answer["access_token"]
    device = Device()
    request(server, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + device.jwt(server.base)})
    _, _, body = request(server, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + desk})
    means = body["paymentMeansId"]
    _, _, grant = request(server, "POST", f"/wlp/v1/devices/{device.subject}/offline-grants", {"count": 10},
                          headers={"Authorization": "Bearer " + device.jwt(server.base)})
    for _ in range(30):
        request(server, "POST", f"/wlp/v1/devices/{device.subject}/offline-grants", {"count": 10}, headers={"Authorization": "Bearer " + device.jwt(server.base)})
    stream = EventStream(server, device)
    stream.start()
    time.sleep(0.5)
    tokens = {f"term-{n}": device.offline(means, grant["first"] + n) for n in range(300)}
    outcomes, lock = {}, threading.Lock()
    stopping = threading.Event()

    def one(attempt):
        try:
            status, _, body = pay(server, desk, tokens[attempt], attempt)
            outcome = ("answered", status, body.get("transactionId"))
        except ConnectionRefusedError:
            outcome = ("refused connection", None, None)
        except OSError as error:
            outcome = ("cut off", type(error).__name__, None)
        with lock:
            outcomes[attempt] = outcome
            if len(outcomes) == 60 and not stopping.is_set():
                stopping.set()
                server.process.send_signal(signal.SIGTERM)

    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(one, tokens))
    code = server.stop(signal.SIGTERM)
    check("SIGTERM: the server exits 0", code == 0, code)
    check("SIGTERM: the open event stream was live, then ended", stream.status == 200 and stream.ended.wait(10) and time.time() - started < 30,
          stream.status)
    # A connection the kernel took but the server never accepted is reset when
    # the listener closes; the client cannot tell it from a cut-off request,
    # so the proof is in the retry: nothing was half-done.
    cut = sum(1 for o in outcomes.values() if o[0] == "cut off")
    answered = {a: o[2] for a, o in outcomes.items() if o[0] == "answered" and o[1] == 200}
    wrong = [o for o in outcomes.values() if o[0] == "answered" and o[1] != 200]
    check(f"SIGTERM mid-burst: {len(answered)} answered 200, {cut} reset before the server took them, no other answer",
          answered and not wrong, wrong[:3])
    server = Server(server.state, server.port)
    server.start()
    desk = desk_token(server)[2]["access_token"]
    same = all(pay(server, desk, tokens[a], a)[2].get("transactionId") == t for a, t in answered.items())
    check("SIGTERM: after a restart every answered payment stands under its attempt", same)
    rest = [a for a in tokens if a not in answered]
    retried = sum(1 for a in rest if pay(server, desk, tokens[a], a)[0] == 200)
    check(f"SIGTERM: the {len(rest)} unanswered attempts retried: each accepted (nothing half-written)", retried == len(rest), retried)
    server.stop()


def tls(directory):
    """TLS from PEM files: a self-signed certificate for 127.0.0.1 made here
    (pyca/cryptography), the server started with it, a client that trusts only
    that certificate; a client that trusts nothing is refused; a key file that
    does not match is refused at start."""
    import datetime
    import ipaddress
    import ssl
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    def certificate(key):
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tokenmint e2e")])
        now = datetime.datetime.now(datetime.timezone.utc)
        return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                .sign(key, hashes.SHA256()))

    key = ec.generate_private_key(ec.SECP256R1())
    cert_path, key_path, other_path = (os.path.join(directory, n) for n in ("cert.pem", "key.pem", "other.pem"))
    with open(cert_path, "wb") as handle:
        handle.write(certificate(key).public_bytes(serialization.Encoding.PEM))
    for path, k in ((key_path, key), (other_path, ec.generate_private_key(ec.SECP256R1()))):
        with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as handle:
            handle.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    state = os.path.join(directory, "tls-state")
    port = free_port()
    process = subprocess.Popen([TOKENMINT, "serve", "--state", state, "--port", str(port), "--tls-certificate", cert_path, "--tls-key", key_path,
                                "--log-level", "error"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    check("TLS from PEM files: the server listens on https", line == f"listening on https://127.0.0.1:{port}", line)
    try:
        context = ssl.create_default_context(cafile=cert_path)
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        body = json.loads(response.read())
        check("TLS: a client trusting the certificate gets /healthz", response.status == 200 and body.get("status") == "ok", body)
        connection.close()
        try:
            strict = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(), timeout=10)
            strict.request("GET", "/healthz")
            strict.getresponse()
            check("TLS: a client that does not trust the certificate is refused", False)
        except ssl.SSLError:
            check("TLS: a client that does not trust the certificate is refused", True)
    finally:
        process.send_signal(signal.SIGTERM)
        check("TLS: SIGTERM, exit 0", process.wait(timeout=30) == 0)
        process.stdout.close()
        process.stderr.close()
    result = subprocess.run([TOKENMINT, "serve", "--state", state, "--port", str(free_port()), "--tls-certificate", cert_path, "--tls-key", other_path],
                            capture_output=True, text=True, timeout=60)
    check("TLS: a key that does not match the certificate is refused at start (exit 2)", result.returncode == 2 and "TLS" in result.stderr,
          result.stderr[-300:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenmint-serve-") as state:
        add_client(state)
        server = Server(state, free_port())
        line = server.start()
        check("the server prints the URL it listens on", line == "listening on " + server.base, line)
        try:
            desk, device, _, stream = flow(server)
            bad_input(server, desk, device)
            user_token_exchange(server)
            server = cli_flow(server)
        finally:
            code = server.stop()
        check("SIGTERM after the flow: exit 0", code == 0, code)
        check("the event stream ended with the server", stream.ended.wait(10))
        server = kill_mid_payment(state, free_port())
        graceful(server)
        tls(state)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
