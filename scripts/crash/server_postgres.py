#!/usr/bin/env python3
"""Two `tokenmint serve` processes on one PostgreSQL database share their
OAuth state and accept each of 10,000 payments exactly once, through a
SIGKILL of one of them.

Both servers keep their state on PostgreSQL (`--postgres`, a database of
this run's own): the payment state (ledger, grants, devices, means,
transactions, events) and the OAuth state (signing keys, refresh families,
clients, accounts, codes, passkeys). Each has a state directory of its own
holding only the master key they share (B's is copied from A's; without it B
refuses to start), and they share one `--issuer` (their public name). OAuth
across the two: the same JWKS; a code issued at one is redeemed at the other
and only once; a refresh token rotated at A and replayed at B revokes the
family at both; a refresh token revoked at A is refused at B. An independent device (pyca/cryptography, joserfc) registers
at one server, a desk enrols it at the other, the device takes its offline
grant at the first. Then 8 desk threads present 10,000 offline tokens, each
to a server picked at random; server A is SIGKILLed after a quarter of the
answers, and every attempt it cut off is retried at server B. Checks: every
acknowledged payment is accepted again under its attempt at the other server
with the same transaction ID; every token presented under a second attempt
is refused as replayed, whichever server sees it; the device's transactions
list (either server) holds 10,000 payments.

Needs TOKENMINT_POSTGRES_URL (scripts/postgres-cluster start prints it) and
the CLI in $TOKENMINT (default .build/debug/tokenmint). `--tokens N`.
"""
import argparse
import concurrent.futures
import hashlib
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import server_e2e  # noqa: E402
from server_e2e import (ACCOUNT_PASSWORD, PARTNER_CLIENT, PARTNER_REDIRECT, Device, Server, add_client, b64url, check, desk_token,  # noqa: E402
                        form_post, free_port, fresh_database, pay, request)


ISSUER = "http://pay.tokenmint.test"


def authorize(server):
    """A code for alice at `server` (the sign-in form posted) and its PKCE verifier."""
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    status, headers, _ = form_post(server, "/oauth/authorize", {
        "response_type": "code", "client_id": PARTNER_CLIENT, "redirect_uri": PARTNER_REDIRECT, "code_challenge": challenge,
        "code_challenge_method": "S256", "state": "s1", "username": "alice", "password": ACCOUNT_PASSWORD})
    location = {name.lower(): value for name, value in headers.items()}.get("location", "")
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)).get("code"), verifier


def redeem(server, code, verifier):
    return form_post(server, "/oauth/token", {"grant_type": "authorization_code", "code": code, "redirect_uri": PARTNER_REDIRECT,
                                              "code_verifier": verifier, "client_id": PARTNER_CLIENT})


def refresh(server, token):
    return form_post(server, "/oauth/token", {"grant_type": "refresh_token", "refresh_token": token, "client_id": PARTNER_CLIENT})


def shared_oauth(a, b):
    """The OAuth state is one, whichever server is asked."""
    check("both servers publish the same JWKS", request(a, "GET", "/oauth/jwks")[2] == request(b, "GET", "/oauth/jwks")[2])
    code, verifier = authorize(a)
    status, _, tokens = redeem(b, code, verifier)
    check("a code issued at A is redeemed at B", status == 200 and "refresh_token" in tokens, tokens)
    status, _, again = redeem(a, code, verifier)
    check("the same code at A afterwards: invalid_grant (redeemed once)", status == 400 and again.get("error") == "invalid_grant", again)
    first = tokens.get("refresh_token", "")
    status, _, rotated = refresh(a, first)
    check("its refresh token rotates at A", status == 200 and rotated.get("refresh_token") not in (None, first), rotated)
    status, _, replay = refresh(b, first)
    check("the rotated-out token replayed at B: invalid_grant", status == 400 and replay.get("error") == "invalid_grant", replay)
    status, _, after = refresh(a, rotated.get("refresh_token", ""))
    check("the replay revoked the family at A too: its newest token is refused", status == 400, after)
    code, verifier = authorize(b)
    status, _, tokens = redeem(a, code, verifier)
    check("a code issued at B is redeemed at A", status == 200, tokens)
    second = tokens.get("refresh_token", "")
    status, _, _ = form_post(a, "/oauth/revoke", {"token": second, "client_id": PARTNER_CLIENT})
    check("its refresh token is revoked at A", status == 200 and second != "")
    status, _, revoked = refresh(b, second)
    check("the revoked token at B: invalid_grant", status == 400 and revoked.get("error") == "invalid_grant", revoked)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10000)
    args = parser.parse_args()
    url = os.environ.get("TOKENMINT_POSTGRES_URL")
    if not url:
        print("server_postgres: TOKENMINT_POSTGRES_URL is not set (scripts/postgres-cluster start prints it)")
        return 2
    url = fresh_database(url, "serve_pg")
    total = args.tokens
    with tempfile.TemporaryDirectory(prefix="tokenmint-serve-pg-") as work:
        state, state_b = os.path.join(work, "a"), os.path.join(work, "b")
        shared = ["--postgres", url]
        add_client(state, shared)
        for args_, stdin in ((["client", "add", "--id", PARTNER_CLIENT, "--redirect-uri", PARTNER_REDIRECT], None),
                             (["account", "add", "--username", "alice", "--password-stdin"], ACCOUNT_PASSWORD + "\n")):
            result = subprocess.run([server_e2e.TOKENMINT, "serve", *args_, "--state", state, *shared], input=stdin, capture_output=True, text=True)
            check(f"serve {' '.join(args_[:2])} --postgres", result.returncode == 0, result.stderr[-500:])
        # One public name for both instances (behind one load balancer, say):
        # the OAuth issuer and the audience of device JWTs.
        extra = [*shared, "--offline-grant", str(total), "--issuer", ISSUER]
        refused = subprocess.run([server_e2e.TOKENMINT, "serve", "--state", state_b, "--port", "0", *extra], capture_output=True, text=True, timeout=120)
        check("a second server without the shared master key refuses to start, naming master.key",
              refused.returncode != 0 and "master.key" in refused.stderr and not os.path.exists(os.path.join(state_b, "master.key")),
              refused.stderr[-500:])
        os.makedirs(state_b, mode=0o700, exist_ok=True)
        with open(os.path.join(state, "master.key"), "rb") as source:
            key = source.read()
        descriptor = os.open(os.path.join(state_b, "master.key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(descriptor, key)
        os.close(descriptor)
        a = Server(state, free_port(), extra_args=extra)
        b = Server(state_b, free_port(), extra_args=extra)
        a.start()
        b.start()
        try:
            shared_oauth(a, b)
            _, _, answer = desk_token(a)
            desk = answer["access_token"]
            _, _, answer_b = desk_token(b)
            check("both servers share the issuer's key: a token from one is a desk token at the other",
                  request(b, "GET", "/wlp/v1/transactions?size=1", headers={"Authorization": "Bearer " + desk})[0] == 200)
            device = Device()
            status, _, _ = request(a, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check("the device registers at server A", status == 201)
            status, _, body = request(b, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + desk})
            check("a desk enrols it at server B (the directory is shared)", status == 201, body)
            means = body["paymentMeansId"]
            status, _, grant = request(a, "POST", f"/wlp/v1/devices/{device.subject}/offline-grants", {"count": total},
                                       headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check(f"server A grants {total} offline counters", status == 201 and grant.get("count") == total, grant)
            jwt = device.jwt(ISSUER)
            request(a, "GET", f"/wlp/v1/devices/{device.subject}", headers={"Authorization": "Bearer " + jwt})
            status, _, _ = request(b, "GET", f"/wlp/v1/devices/{device.subject}", headers={"Authorization": "Bearer " + jwt})
            check("a device JWT used at A is refused at B (one jti ledger)", status == 401)

            tokens = {f"pg-{n}": device.offline(means, grant["first"] + n - 1) for n in range(1, total + 1)}
            answers = {}
            lock = threading.Lock()
            killed = threading.Event()
            rng = random.Random(7)
            target = {attempt: (a if rng.random() < 0.5 else b) for attempt in tokens}

            def one(attempt):
                server = target[attempt]
                if server is a and killed.is_set():
                    return
                try:
                    status, _, body = pay(server, desk, tokens[attempt], attempt)
                except OSError:
                    return
                with lock:
                    answers[attempt] = (server, status, body)
                    if len(answers) == total // 4 and not killed.is_set():
                        killed.set()
                        a.process.send_signal(signal.SIGKILL)

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(one, tokens))
            a.stop(signal.SIGKILL)
            acknowledged = {attempt: body["transactionId"] for attempt, (_, status, body) in answers.items() if status == 200}
            refused = [(attempt, body) for attempt, (_, status, body) in answers.items() if status != 200]
            check(f"SIGKILL of server A mid-run: {len(acknowledged)} acknowledged, {total - len(answers)} cut off, none refused",
                  not refused and 0 < len(acknowledged) < total, refused[:3])
            lost = [attempt for attempt in tokens if attempt not in acknowledged]
            retried = {}
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                for attempt, (status, _, body) in zip(lost, pool.map(lambda t: pay(b, desk, tokens[t], t), lost)):
                    retried[attempt] = (status, body)
            check(f"the {len(lost)} cut-off attempts retried at server B: each accepted",
                  all(status == 200 for status, _ in retried.values()), [v for v in retried.values() if v[0] != 200][:3])
            sample = list(acknowledged)[:: max(1, len(acknowledged) // 500)]
            same = all(pay(b, desk, tokens[t], t)[2].get("transactionId") == acknowledged[t] for t in sample)
            check(f"acknowledged attempts retried at server B ({len(sample)} sampled): the same transaction IDs", same)

            def again(attempt):
                return pay(b, desk, tokens[attempt], attempt + "-again")[2].get("error")
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                errors = list(pool.map(again, tokens))
            check(f"each of the {total} tokens under a second attempt: replayedToken", all(e == "replayedToken" for e in errors),
                  [e for e in errors if e != "replayedToken"][:3])
            a = Server(state, a.port, extra_args=extra)
            a.start()
            _, _, page = request(a, "GET", "/wlp/v1/transactions?size=1", headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check(f"server A restarted: the device's transactions list holds {total} payments", page.get("totalElements") == total, page.get("totalElements"))
        finally:
            for server in (a, b):
                if server.process and server.process.poll() is None:
                    server.stop()
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
